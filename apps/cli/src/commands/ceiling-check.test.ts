import { chmod, chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_CEILING, parseCeilingToml } from '@letkite/ceiling';
import { describe, expect, test } from 'vitest';
import { runCaptured, tempDirEachTest } from '../testing';
import { ceilingCheck } from './ceiling-check';

const tmp = tempDirEachTest('letkite-ceiling-check-');

async function check(args: string[]) {
  return runCaptured((io) => ceilingCheck(args, io));
}

async function ceilingFile(text: string, mode = 0o644): Promise<string> {
  const path = join(tmp.path, 'ceiling.toml');
  await writeFile(path, text);
  await chmod(path, mode);
  return path;
}

describe('letkite ceiling check', () => {
  test.runIf(process.getuid?.() === 0)(
    'a ceiling in a directory its run-as account owns is reported: that account could replace it',
    async () => {
      const path = await ceilingFile('version = 1\nrun_as = "nobody"\n');
      await chown(tmp.path, 65534, 65534);
      const { code, stderr } = await check(['--ceiling', path]);
      expect(code).not.toBe(0);
      expect(stderr).toMatch(/owned by uid 65534: the run_as account "nobody" could change its own ceiling/);
    },
  );

  test('a valid file prints the effective ceiling as TOML, with source: file', async () => {
    const path = await ceilingFile('version = 1\nshell = "off"\nrun_as = "svc"\n');
    const { code, stdout, stderr } = await check(['--ceiling', path]);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout.split('\n')[0]).toBe(`# source: file (${path})`);
    expect(parseCeilingToml(stdout)).toEqual({ ...DEFAULT_CEILING, shell: 'off', run_as: 'svc' });
  });

  test('pinned approvers are shown by name, key algorithm and relying party, and the output still parses', async () => {
    const key =
      'pQECAyYgASFYIMnaKxRDYfnDwbuRtqW5U44ZxBYKAxaoowK8pwJpqzsmIlggdTzJjL0NMskwmDxzF9aylP3qawQeF4QAL95RlTQoi7Y';
    const path = await ceilingFile(
      `version = 1\napprovers = [ { name = "Petra", credential_id = "cGV0cmE", public_key = "${key}", rp_id = "localhost" } ]\n`,
    );
    const { code, stdout } = await check(['--ceiling', path]);
    expect(code).toBe(0);
    expect(stdout).toContain('# approvals: verified by this machine. 1 pinned approver(s):');
    expect(stdout).toContain('#   "Petra": ES256 passkey cGV0cmE for localhost');
    expect(parseCeilingToml(stdout).approvers).toHaveLength(1);
    const none = await check(['--ceiling', await ceilingFile('version = 1\ncommands_mode = "allowlist"\n')]);
    expect(none.stdout).toContain('a ceiling approve rule can');
    expect(none.stdout).toContain('empty allow list: no command runs here');
  });

  test('a missing file prints the defaults, with source: defaults', async () => {
    const { code, stdout } = await check([`--ceiling=${join(tmp.path, 'absent.toml')}`]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^# source: defaults \(no file at .*absent\.toml\)\n/);
    expect(parseCeilingToml(stdout)).toEqual(DEFAULT_CEILING);
  });

  test('an invalid file prints every error with its line and exits 2', async () => {
    const path = await ceilingFile(
      'version = 1\nshel = "off"\ngui = "all"\nfiles = [{ path = "rel", access = "rw" }]\n',
    );
    const { code, stdout, stderr } = await check(['--ceiling', path]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('line 2: shel: unknown key "shel"');
    expect(stderr).toContain('line 3: gui:');
    expect(stderr).toContain('line 4: files[0].path:');
  });

  test('a TOML syntax error is printed with its line', async () => {
    const path = await ceilingFile('version = 1\n\nshell = "off\n');
    const { code, stderr } = await check(['--ceiling', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('line 3:');
  });

  test('a file without version = 1 is refused', async () => {
    const path = await ceilingFile('shell = "off"\n');
    const { code, stderr } = await check(['--ceiling', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('version:');
  });

  test('a group-writable file is refused even when its content is valid', async () => {
    const path = await ceilingFile('version = 1\n', 0o664);
    const { code, stdout, stderr } = await check(['--ceiling', path]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('writable by its group (mode 0664)');
  });

  test('a world-writable file is refused', async () => {
    const path = await ceilingFile('version = 1\n', 0o606);
    const { code, stderr } = await check(['--ceiling', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('writable by others');
  });

  test.skipIf(process.getuid?.() !== 0)('a file owned by another user is refused (run as root)', async () => {
    const path = await ceilingFile('version = 1\n');
    await chown(path, 12345, 12345);
    const { code, stderr } = await check(['--ceiling', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('owned by uid 12345');
  });

  test('a directory in place of the file is refused', async () => {
    const path = join(tmp.path, 'ceiling.toml');
    await mkdir(path, { mode: 0o755 });
    const { code, stderr } = await check(['--ceiling', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('not a regular file');
  });

  test('an unknown option is a usage error', async () => {
    const { code, stderr } = await check(['--cieling', '/x']);
    expect(code).toBe(2);
    expect(stderr).toContain('usage: letkite ceiling check');
  });
});
