import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, FULL_SHELL_CEILING, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir, waitFor } from './support/processes';

interface ExecOut {
  exit_code: number | null;
  stdout: string;
  stderr: string;
}

const user = 'root';

describe('the machine keeps the last word (ceiling, sandbox, file tools, allowlist)', () => {
  let gw: TestGateway;
  let client: Client;
  const agents: TestAgent[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    gw = await TestGateway.start();
    client = await mcpClient(gw.url, await gw.apiToken());
  });

  afterAll(async () => {
    await client?.close();
    for (const a of agents) await a.dispose();
    await gw?.dispose();
    for (const d of dirs) removeDir(d);
  });

  async function agentWith(name: string, ceiling: string | null): Promise<TestAgent> {
    const a = await gw.addAgent(name, { ceiling });
    agents.push(a);
    return a;
  }

  function dir(prefix: string): string {
    const d = tempDir(prefix);
    dirs.push(d);
    return d;
  }

  test('a ceiling with shell = "off" refuses exec even when the connection policy is full', async () => {
    await agentWith('shell-off', `version = 1\nshell = "off"\nrun_as = "${user}"\n`);
    const r = await callTool(client, 'exec', { machine: 'shell-off', command: 'echo should-not-run' });
    expect(r.error?.code).toBe('blocked_by_ceiling');
  });

  test('machines_list shows the effective ceiling the agent reported', async () => {
    await agentWith('reporter', `version = 1\nshell = "sandboxed"\nrun_as = "${user}"\nwake = false\n`);
    const r = await callTool<{ machines: { name: string; ceiling: { shell?: string; run_as?: string } | null }[] }>(
      client,
      'machines_list',
      {},
    );
    const m = await waitFor('the ceiling report', async () => {
      const again = await callTool<typeof r.data>(client, 'machines_list', {});
      return again.data.machines.find((x) => x.name === 'reporter' && x.ceiling !== null);
    });
    expect(m.ceiling).toMatchObject({ shell: 'sandboxed', run_as: user });
  });

  test('a ceiling edited while the agent runs applies to the next request; an invalid edit fails closed', async () => {
    const a = await agentWith('edited', FULL_SHELL_CEILING);
    expect((await callTool<ExecOut>(client, 'exec', { machine: 'edited', command: 'echo one' })).data.stdout).toBe(
      'one\n',
    );

    a.writeCeiling(`version = 1\nshell = "off"\nrun_as = "${user}"\n`);
    const off = await callTool(client, 'exec', { machine: 'edited', command: 'echo two' });
    expect(off.error?.code).toBe('blocked_by_ceiling');

    a.writeCeiling(FULL_SHELL_CEILING);
    await waitFor('the restored ceiling', async () => {
      const r = await callTool<ExecOut>(client, 'exec', { machine: 'edited', command: 'echo three' });
      return r.ok && r.data.stdout === 'three\n';
    });

    a.writeCeiling(`version = 1\nshel = "full"\nrun_as = "${user}"\n`);
    const typo = await callTool(client, 'exec', { machine: 'edited', command: 'echo four' });
    expect(typo.error?.code).toBe('blocked_by_ceiling');
    expect(typo.error?.message, JSON.stringify(typo.error)).toMatch(/shel/);
    await waitFor('the fail-closed report', () => (a.process?.stderr ?? '').includes('FAILING CLOSED'));
  });

  test('a ceiling writable by others, or owned by someone else, fails closed', async () => {
    const a = await agentWith('bad-mode', FULL_SHELL_CEILING);
    a.writeCeiling(FULL_SHELL_CEILING, 0o666);
    const writable = await callTool(client, 'exec', { machine: 'bad-mode', command: 'echo x' });
    expect(writable.error?.code).toBe('blocked_by_ceiling');
    expect(writable.error?.message, JSON.stringify(writable.error)).toMatch(/writable by others/);

    a.writeCeiling(FULL_SHELL_CEILING, 0o644);
    chownSync(a.ceilingPath, 65534, 65534);
    // The gateway refuses from the machine's last report until the agent's next one arrives (a watch event or
    // its 2 s poll), so the new reason shows up shortly after the change, never an allowed call in between.
    await waitFor('the owner reason', async () => {
      const owner = await callTool(client, 'exec', { machine: 'bad-mode', command: 'echo x' });
      expect(owner.error?.code).toBe('blocked_by_ceiling');
      return /owned by uid 65534/.test(owner.error?.message ?? '');
    });
  });

  test('a missing ceiling file means the documented defaults (sandboxed shell, run as "letkite")', async () => {
    await agentWith('no-file', null);
    const r = await callTool<ExecOut>(client, 'exec', { machine: 'no-file', command: 'id -un' });
    if (spawnSync('getent', ['passwd', 'letkite']).status !== 0) {
      // No "letkite" account here: the default run_as refuses rather than running as root.
      expect(r.error?.code).toBe('blocked_by_ceiling');
      expect(r.error?.message).toMatch(/run_as account "letkite"/);
    } else {
      // A machine set up by the installer has the account: the command runs as it, never as root.
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.data.stdout.trim()).toBe('letkite');
    }
  });

  describe('sandboxed shell (Landlock)', () => {
    let work: string;
    beforeAll(async () => {
      work = dir('sbx');
      mkdirSync(join(work, 'secret'));
      writeFileSync(join(work, 'secret', 'token.txt'), 'hidden-value');
      await agentWith(
        'sandboxed',
        [
          'version = 1',
          'shell = "sandboxed"',
          `run_as = "${user}"`,
          `files = [{ path = "${work}", access = "rw" }, { path = "*", access = "ro" }]`,
          `deny = ["${join(work, 'secret')}"]`,
          '',
        ].join('\n'),
      );
    });

    const run = (command: string) => callTool<ExecOut>(client, 'exec', { machine: 'sandboxed', command, cwd: work });

    test('reads /usr', async () => {
      const r = await run('ls /usr/bin | head -1 && cat /etc/hostname >/dev/null && echo ok');
      expect(r.data.exit_code).toBe(0);
      expect(r.data.stdout).toContain('ok');
    });

    test('cannot write /etc, and nothing is left behind', async () => {
      const r = await run('touch /etc/letkite-sandbox-probe');
      expect(r.data.exit_code).not.toBe(0);
      expect(existsSync('/etc/letkite-sandbox-probe')).toBe(false);
    });

    test('cannot read a denied directory inside a granted one', async () => {
      const r = await run(`cat ${join(work, 'secret', 'token.txt')}; ls ${join(work, 'secret')}`);
      expect(r.data.stdout).not.toContain('hidden-value');
      expect(r.data.stdout).not.toContain('token.txt');
      expect(readFileSync(join(work, 'secret', 'token.txt'), 'utf8')).toBe('hidden-value');
    });

    test('can write its rw path', async () => {
      const r = await run(`echo written > ${join(work, 'out.txt')}`);
      expect(r.data.exit_code).toBe(0);
      expect(readFileSync(join(work, 'out.txt'), 'utf8')).toBe('written\n');
    });

    test('cannot open a TCP connection when tunnels are not allowed', async () => {
      let connections = 0;
      const server = createServer((s) => {
        connections++;
        s.end();
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const port = (server.address() as { port: number }).port;
      const r = await callTool<ExecOut>(client, 'exec', {
        machine: 'sandboxed',
        argv: ['curl', '-s', '--max-time', '3', `http://127.0.0.1:${port}/`],
      });
      server.close();
      expect(r.error).toBeUndefined();
      expect(r.data.exit_code).not.toBe(0);
      expect(connections).toBe(0);
    });
  });

  describe('file tools', () => {
    let root: string;
    beforeAll(async () => {
      root = dir('files');
      mkdirSync(join(root, 'app'));
      mkdirSync(join(root, 'hidden'));
      writeFileSync(join(root, 'app', 'config.txt'), 'hello files\n');
      writeFileSync(join(root, 'hidden', 'key.txt'), 'do not show');
      writeFileSync(join(root, 'ro.txt'), 'read only');
      symlinkSync('/etc/passwd', join(root, 'app', 'passwd-link'));
      symlinkSync(join(root, 'hidden'), join(root, 'app', 'hidden-link'));
      await agentWith(
        'files',
        [
          'version = 1',
          'shell = "full"',
          `run_as = "${user}"`,
          `files = [{ path = "${join(root, 'app')}", access = "rw" }, { path = "${root}", access = "ro" }]`,
          `deny = ["${join(root, 'hidden')}"]`,
          '',
        ].join('\n'),
      );
    });

    test('reads a file with its sha256', async () => {
      const r = await callTool<{ content: string; sha256: string; size: number }>(client, 'read_file', {
        machine: 'files',
        path: join(root, 'app', 'config.txt'),
      });
      expect(r.data.content).toBe('hello files\n');
      expect(r.data.size).toBe(12);
      expect(r.data.sha256).toMatch(/^[0-9a-f]{64}$/);
    });

    test('a denied path behaves exactly like a missing one', async () => {
      const denied = await callTool(client, 'read_file', { machine: 'files', path: join(root, 'hidden', 'key.txt') });
      const missing = await callTool(client, 'read_file', { machine: 'files', path: join(root, 'hidden', 'nope.txt') });
      expect(denied.error?.code).toBe('not_found');
      expect(missing.error?.code).toBe('not_found');
      expect(denied.error?.message.replace('key.txt', 'X')).toBe(missing.error?.message.replace('nope.txt', 'X'));
      const list = await callTool<{ entries: { name: string }[] }>(client, 'list_dir', {
        machine: 'files',
        path: root,
      });
      expect(list.data.entries.map((e) => e.name)).not.toContain('hidden');
    });

    test('symlinks and .. cannot escape the allowed roots', async () => {
      for (const path of [
        join(root, 'app', 'passwd-link'),
        join(root, 'app', 'hidden-link', 'key.txt'),
        `${join(root, 'app')}/../../../etc/passwd`,
      ]) {
        const r = await callTool(client, 'read_file', { machine: 'files', path });
        expect(r.error?.code, path).toBe('not_found');
      }
    });

    test('the ceiling makes a path read-only whatever the policy says', async () => {
      const r = await callTool(client, 'write_file', { machine: 'files', path: join(root, 'ro.txt'), content: 'x' });
      expect(r.error?.code).toBe('blocked_by_ceiling');
      expect(readFileSync(join(root, 'ro.txt'), 'utf8')).toBe('read only');
    });

    test('if_sha256 protects against clobbering', async () => {
      const path = join(root, 'app', 'config.txt');
      const first = await callTool<{ sha256: string }>(client, 'read_file', { machine: 'files', path });
      const ok = await callTool<{ sha256: string }>(client, 'write_file', {
        machine: 'files',
        path,
        content: 'v2\n',
        if_sha256: first.data.sha256,
      });
      expect(ok.ok).toBe(true);
      const stale = await callTool(client, 'write_file', {
        machine: 'files',
        path,
        content: 'v3\n',
        if_sha256: first.data.sha256,
      });
      expect(stale.error?.code).toBe('conflict');
      expect(readFileSync(path, 'utf8')).toBe('v2\n');
    });

    test('oversized reads are refused with too_large', async () => {
      const r = await callTool(client, 'read_file', {
        machine: 'files',
        path: join(root, 'app', 'config.txt'),
        length: 64 * 1024 * 1024,
      });
      expect(r.error?.code).toBe('too_large');
    });
  });

  describe('run_as: commands and file operations run as that OS account', () => {
    let work: string;
    beforeAll(async () => {
      work = dir('runas');
      chmodSync(work, 0o777);
      writeFileSync(join(work, 'root-only.txt'), 'root secret', { mode: 0o600 });
      await agentWith(
        'as-nobody',
        [
          'version = 1',
          'shell = "full"',
          'run_as = "nobody"',
          `files = [{ path = "${work}", access = "rw" }, { path = "*", access = "ro" }]`,
          'deny = []',
          '',
        ].join('\n'),
      );
    });

    test('commands run as the account', async () => {
      const r = await callTool<ExecOut>(client, 'exec', { machine: 'as-nobody', command: 'id -un; echo $HOME' });
      expect(r.data.stdout.split('\n')[0]).toBe('nobody');
    });

    test('file reads get the account’s OS rights on top of the rules', async () => {
      const r = await callTool(client, 'read_file', { machine: 'as-nobody', path: join(work, 'root-only.txt') });
      expect(r.error?.code).toBe('forbidden');
      expect(r.error?.message).toMatch(/permission denied by the operating system/);
    });

    test('files it writes belong to the account', async () => {
      const path = join(work, 'made-by-nobody.txt');
      const r = await callTool(client, 'write_file', { machine: 'as-nobody', path, content: 'hi' });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(statSync(path).uid).toBe(65534);
    });
  });

  describe('allowlist mode forced by the ceiling', () => {
    let token: Client;
    beforeAll(async () => {
      await agentWith(
        'allowlisted',
        `version = 1\nshell = "full"\ncommands_mode = "allowlist"\nallow = ["df *", "/usr/bin/id *"]\nrun_as = "${user}"\n`,
      );
      token = await mcpClient(
        gw.url,
        await gw.apiTokenWithGrant({
          policy: {
            name: 'ops-allowlist',
            shell: 'full',
            files: [{ path: '*', access: 'ro' }],
            commands: { mode: 'shell', default: 'allow', allow: ['df -h', '/usr/bin/id *'] },
          },
          machines: '*',
          scopes: '*',
        }),
      );
    });
    afterAll(async () => token?.close());

    test('shell syntax is refused', async () => {
      const r = await callTool(token, 'exec', { machine: 'allowlisted', command: 'ls; rm -rf x' });
      expect(r.error?.code).toBe('blocked_by_ceiling');
    });

    test('a listed program runs via execve', async () => {
      const r = await callTool<ExecOut>(token, 'exec', { machine: 'allowlisted', command: 'df -h' });
      expect(r.data.exit_code).toBe(0);
      expect(r.data.stdout).toMatch(/Filesystem/);
    });

    test('an unlisted program is refused', async () => {
      const r = await callTool(token, 'exec', { machine: 'allowlisted', command: 'uname -a' });
      expect(r.error?.code).toBe('blocked_by_ceiling');
    });
  });
});

// The rogue-gateway part (a compromised gateway driving a real agent) lives in rogue-gateway.test.ts.
