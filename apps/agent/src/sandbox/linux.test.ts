import { type ChildProcess, execFileSync, type StdioOptions, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isLetKiteError } from '@letkite/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assertSandboxUsable,
  probeSandbox,
  SANDBOX_REFUSED_EXIT,
  type SandboxProbe,
  sandboxHelperPath,
  sandboxRefusal,
  wrapInSandbox,
} from './linux';
import type { SandboxSpec } from './spec';

const NOBODY = 65534;
const env = { PATH: '/usr/bin:/bin', LANG: 'C' };
const helper = sandboxHelperPath();

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function collect(child: ChildProcess): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `sh -c script` through the real helper, the way the executor will. */
function runSandboxed(
  spec: SandboxSpec,
  script: string,
  options: { uid?: number; gid?: number; stdio?: StdioOptions; shell?: string } = {},
): Promise<Outcome> {
  const launch = wrapInSandbox(spec, [options.shell ?? '/bin/sh', '-c', script]);
  const ids = options.uid === undefined ? {} : { uid: options.uid, gid: options.gid ?? options.uid };
  return collect(spawn(launch.file, launch.args, { env, stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'], ...ids }));
}

function runHelper(args: string[]): Promise<Outcome> {
  return collect(spawn(helper, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
}

const roots: string[] = [];

/** A fixture tree: ro/ (with a secret dir and a secret file inside), rw/ (with a secret dir inside), tmp/. */
function fixture(owner?: number) {
  const root = mkdtempSync(join(tmpdir(), 'letkite-sbx-'));
  roots.push(root);
  const ro = join(root, 'ro');
  const rw = join(root, 'rw');
  const tmp = join(root, 'tmp');
  for (const dir of [ro, join(ro, 'secret'), join(ro, 'public'), rw, join(rw, 'secret'), tmp]) mkdirSync(dir);
  writeFileSync(join(ro, 'public', 'hello.txt'), 'hello\n');
  writeFileSync(join(ro, 'secret', 'token'), 'TOP-SECRET\n');
  writeFileSync(join(ro, 'id.pem'), 'PRIVATE KEY\n');
  writeFileSync(join(rw, 'secret', 'data'), 'RW-SECRET\n');
  if (owner !== undefined) {
    chmodSync(root, 0o755);
    execFileSync('chown', ['-R', `${owner}:${owner}`, root]);
    chownSync(root, 0, 0);
  }
  const spec: SandboxSpec = {
    readPaths: [ro],
    writePaths: [rw],
    denyPaths: [join(ro, 'secret'), join(ro, 'id.pem'), join(rw, 'secret')],
    tmpDir: tmp,
    allowTcp: false,
  };
  return { root, ro, rw, tmp, spec };
}

const unique = () => `letkite-sbx-${randomBytes(6).toString('hex')}`;

beforeAll(() => {
  // Always exercise the current source: the build script is a no-op when the helper is up to date.
  execFileSync(process.execPath, [fileURLToPath(new URL('../../scripts/build-sandbox.mjs', import.meta.url))]);
});

afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe('probe', () => {
  test('reports a usable Landlock ABI with network restriction, scoping and user namespaces on this machine', async () => {
    const probe = await probeSandbox();
    expect(probe).toMatchObject({ available: true, net: true, scoped: true, userns: true, mountns: true });
    expect(probe.abi).toBeGreaterThanOrEqual(6);
    expect(() => assertSandboxUsable(probe, fixture().spec)).not.toThrow();
  });

  test('probes as another account', async () => {
    const probe = await probeSandbox({ uid: NOBODY, gid: NOBODY });
    expect(probe).toMatchObject({ available: true, userns: true, mountns: true });
  });

  test('a missing helper makes the probe say unavailable, with the reason', async () => {
    const probe = await probeSandbox({ helperPath: '/nonexistent/letkite-sandbox' });
    expect(probe.available).toBe(false);
    expect(probe.reason).toContain('/nonexistent/letkite-sandbox');
    expect(() => assertSandboxUsable(probe, fixture().spec)).toThrow(expect.objectContaining({ code: 'unsupported' }));
  });
});

describe('filesystem', () => {
  test('reads system directories', async () => {
    const { spec } = fixture();
    const r = await runSandboxed(spec, 'ls /usr/bin >/dev/null && cat /etc/os-release >/dev/null && echo ok');
    expect(r).toMatchObject({ code: 0, stdout: 'ok\n' });
  });

  test('cannot write /etc, and nothing is created there', async () => {
    const { spec } = fixture();
    const target = `/etc/${unique()}`;
    const r = await runSandboxed(spec, `echo pwned > ${target}`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Permission denied/);
    expect(existsSync(target)).toBe(false);
  });

  test('cannot read outside its grants (the agent state under /root, say)', async () => {
    const { spec } = fixture();
    const r = await runSandboxed(spec, 'ls /root');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Permission denied/);
  });

  test('reads a ro path but cannot create, change or delete anything in it', async () => {
    const { spec, ro } = fixture();
    const r = await runSandboxed(
      spec,
      `cat ${ro}/public/hello.txt; echo x > ${ro}/public/new.txt; echo x >> ${ro}/public/hello.txt; rm -f ${ro}/public/hello.txt; exit 0`,
    );
    expect(r.stdout).toBe('hello\n');
    expect(r.stderr.match(/Permission denied|Operation not permitted/g)?.length).toBe(3);
    expect(existsSync(join(ro, 'public', 'new.txt'))).toBe(false);
    expect(readFileSync(join(ro, 'public', 'hello.txt'), 'utf8')).toBe('hello\n');
  });

  test('writes its rw path and its tmp dir', async () => {
    const { spec, rw, tmp } = fixture();
    const r = await runSandboxed(spec, `echo written > ${rw}/out.txt && mkdir ${tmp}/d && echo t > ${tmp}/d/t`);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(readFileSync(join(rw, 'out.txt'), 'utf8')).toBe('written\n');
    expect(readFileSync(join(tmp, 'd', 't'), 'utf8')).toBe('t\n');
  });

  test('a denied directory inside a granted tree looks empty and its files missing', async () => {
    const { spec, ro } = fixture();
    const r = await runSandboxed(spec, `ls -A ${ro}/secret; echo "[listed]"; cat ${ro}/secret/token`);
    expect(r.stdout).toBe('[listed]\n');
    expect(r.stdout + r.stderr).not.toContain('TOP-SECRET');
    expect(r.stderr).toMatch(/No such file or directory/);
    expect(readFileSync(join(ro, 'secret', 'token'), 'utf8')).toBe('TOP-SECRET\n');
  });

  test('a denied file inside a granted tree reads as empty and cannot be overwritten', async () => {
    const { spec, ro } = fixture();
    const r = await runSandboxed(spec, `cat ${ro}/id.pem; echo "[read]"; echo x > ${ro}/id.pem`);
    expect(r.stdout).toBe('[read]\n');
    expect(r.code).not.toBe(0);
    expect(readFileSync(join(ro, 'id.pem'), 'utf8')).toBe('PRIVATE KEY\n');
  });

  test('a denied directory inside a rw tree cannot be written or removed', async () => {
    const { spec, rw } = fixture();
    const r = await runSandboxed(spec, `echo x > ${rw}/secret/new; rm -rf ${rw}/secret; ls -A ${rw}/secret`);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/Read-only file system/);
    expect(readFileSync(join(rw, 'secret', 'data'), 'utf8')).toBe('RW-SECRET\n');
    expect(existsSync(join(rw, 'secret', 'new'))).toBe(false);
  });

  test('the hiding mounts stay private and the command cannot unmount them', async () => {
    const { spec, ro } = fixture();
    const r = await runSandboxed(spec, `umount ${ro}/secret; umount -l ${ro}/secret; cat ${ro}/secret/token`);
    expect(r.stdout).toBe('');
    expect(r.stdout + r.stderr).not.toContain('TOP-SECRET');
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(ro);
  });
});

describe('network', () => {
  let server: Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.end('hi\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    port = address.port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connect = () => `exec 3<>/dev/tcp/127.0.0.1/${port} && head -c 3 <&3`;

  test('cannot open a TCP connection when TCP is not allowed', async () => {
    const before = connections;
    const r = await runSandboxed(fixture().spec, connect(), { shell: '/bin/bash' });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Permission denied/);
    expect(connections).toBe(before);
  });

  test('connects when TCP is allowed', async () => {
    const r = await runSandboxed({ ...fixture().spec, allowTcp: true }, connect(), { shell: '/bin/bash' });
    expect(r).toMatchObject({ code: 0, stdout: 'hi\n' });
  });

  test('connects only to the allowed ports, and never binds', async () => {
    const { spec } = fixture();
    const allowed = await runSandboxed({ ...spec, allowTcp: [port] }, connect(), { shell: '/bin/bash' });
    expect(allowed).toMatchObject({ code: 0, stdout: 'hi\n' });
    const before = connections;
    const other = await runSandboxed({ ...spec, allowTcp: [port === 1 ? 2 : port - 1] }, connect(), {
      shell: '/bin/bash',
    });
    expect(other.code).not.toBe(0);
    expect(connections).toBe(before);
    const bind = await runSandboxed(
      { ...spec, allowTcp: [port] },
      `python3 -c "import socket; socket.socket().bind(('127.0.0.1', 0))"`,
    );
    expect(bind.code).not.toBe(0);
    expect(bind.stderr).toMatch(/PermissionError/);
  });
});

describe('process', () => {
  test('no_new_privs is set', async () => {
    const r = await runSandboxed(fixture().spec, 'grep NoNewPrivs /proc/self/status');
    expect(r.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
  });

  test('inherited file descriptors are closed', async () => {
    const { spec, ro } = fixture();
    const file = join(ro, 'public', 'hello.txt');
    const r = await runSandboxed(
      spec,
      'for fd in 3 4 5; do [ -e /proc/self/fd/$fd ] && echo "open $fd"; done; echo done',
      {
        stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'ignore'],
      },
    );
    expect(r.stdout).toBe('done\n');
    // The same check without the sandbox sees the fds, so the check itself works.
    const plain = await collect(
      spawn(
        '/bin/sh',
        ['-c', `exec 5<${file}; for fd in 3 4 5; do [ -e /proc/self/fd/$fd ] && echo "open $fd"; done`],
        {
          stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
        },
      ),
    );
    expect(plain.stdout).toBe('open 3\nopen 4\nopen 5\n');
  });

  test('cannot signal processes outside the sandbox, even as root, but can signal its own children', async () => {
    const outside = spawn('/bin/sleep', ['30']);
    try {
      const r = await runSandboxed(
        fixture().spec,
        `kill -0 ${outside.pid} && echo reached; sleep 30 & kill $! && echo own`,
      );
      expect(r.stdout).toBe('own\n');
      expect(r.stderr).toMatch(/Operation not permitted/);
    } finally {
      outside.kill();
    }
  });
});

describe('as an unprivileged account (user namespace)', () => {
  test('hides denied paths, writes its rw path, cannot write elsewhere', async () => {
    const { spec, ro, rw } = fixture(NOBODY);
    const outside = `/tmp/${unique()}`;
    const r = await runSandboxed(
      spec,
      `id -u; ls -A ${ro}/secret; cat ${ro}/id.pem; cat ${ro}/public/hello.txt; echo w > ${rw}/out; echo x > ${ro}/public/x; echo y > ${outside}`,
      { uid: NOBODY },
    );
    expect(r.stdout).toBe(`${NOBODY}\nhello\n`);
    expect(r.stderr.match(/Permission denied/g)?.length).toBe(2);
    expect(readFileSync(join(rw, 'out'), 'utf8')).toBe('w\n');
    expect(existsSync(join(ro, 'public', 'x'))).toBe(false);
    expect(existsSync(outside)).toBe(false);
    expect(readFileSync(join(ro, 'secret', 'token'), 'utf8')).toBe('TOP-SECRET\n');
  });

  test('has no capabilities and no_new_privs', async () => {
    const r = await runSandboxed(fixture(NOBODY).spec, 'grep -E "^(CapEff|CapPrm|NoNewPrivs)" /proc/self/status', {
      uid: NOBODY,
    });
    expect(r.stdout).toBe('CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\n');
  });
});

/** Runs the helper as nobody inside a user namespace whose max_user_namespaces is 0: no userns can be made. */
async function runWithoutUserNamespaces(helperArgs: string[]): Promise<Outcome> {
  const inner = `echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups "$@"`;
  const child = spawn(
    'unshare',
    ['--user', '--', '/bin/sh', '-c', 'read go && exec /bin/sh -c "$0" "$@"', inner, 'sh', helper, ...helperArgs],
    {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const outcome = collect(child);
  const own = readlinkSync('/proc/self/ns/user');
  // Map uids once unshare has made the namespace; the re-exec after `read` then runs with root's capabilities in it.
  for (let i = 0; ; i++) {
    let ns = own;
    try {
      ns = readlinkSync(`/proc/${child.pid}/ns/user`);
    } catch {}
    if (ns !== own) break;
    if (i > 400) throw new Error('unshare did not start');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  writeFileSync(`/proc/${child.pid}/uid_map`, '0 0 65536\n');
  writeFileSync(`/proc/${child.pid}/gid_map`, '0 0 65536\n');
  child.stdin?.end('go\n');
  return outcome;
}

describe('fails closed', () => {
  test('a missing helper is refused before anything is spawned', () => {
    const { spec } = fixture();
    expect(() => wrapInSandbox(spec, ['/bin/true'], { helperPath: '/nonexistent/letkite-sandbox' })).toThrow(
      expect.objectContaining({ code: 'unsupported' }),
    );
  });

  test('a malformed spec is refused before anything is spawned', () => {
    const { spec } = fixture();
    for (const bad of [
      { ...spec, readPaths: ['relative/path'] },
      { ...spec, allowTcp: [70000] },
      { ...spec, tmpDir: '' },
    ]) {
      let caught: unknown;
      try {
        wrapInSandbox(bad, ['/bin/true']);
      } catch (err) {
        caught = err;
      }
      expect(isLetKiteError(caught, 'invalid_params')).toBe(true);
    }
  });

  test('a tmp dir that does not exist makes the helper refuse, and the command never runs', async () => {
    const { spec, rw, root } = fixture();
    const r = await runSandboxed({ ...spec, tmpDir: join(root, 'missing') }, `touch ${rw}/ran`);
    expect(r.code).toBe(SANDBOX_REFUSED_EXIT);
    expect(r.stderr).toMatch(/^letkite-sandbox: usage: /);
    expect(existsSync(join(rw, 'ran'))).toBe(false);
    expect(sandboxRefusal(r.code, r.stderr)).toMatchObject({ code: 'unsupported', details: { kind: 'usage' } });
  });

  test('a relative path or an unknown option given to the helper is refused', async () => {
    const { tmp, rw } = fixture();
    for (const args of [['--ro', 'etc'], ['--frobnicate'], ['--tcp', '80,x']]) {
      const r = await runHelper([...args, '--tmp', tmp, '--', '/usr/bin/touch', `${rw}/ran`]);
      expect(r.code).toBe(SANDBOX_REFUSED_EXIT);
      expect(r.stderr).toMatch(/^letkite-sandbox: usage: /);
    }
    expect(existsSync(join(rw, 'ran'))).toBe(false);
  });

  test('deny paths that need hiding are refused when user namespaces are unavailable', async () => {
    const { spec, ro, rw, tmp } = fixture(NOBODY);
    const r = await runWithoutUserNamespaces([...wrapInSandbox(spec, ['/usr/bin/touch', `${rw}/ran`]).args]);
    expect(r.code).toBe(SANDBOX_REFUSED_EXIT);
    expect(r.stderr).toMatch(/^letkite-sandbox: userns unavailable: /);
    expect(sandboxRefusal(r.code, r.stderr)?.details).toEqual({ kind: 'userns unavailable' });
    expect(existsSync(join(rw, 'ran'))).toBe(false);
    // Without deny paths inside its grants the same account still runs sandboxed.
    const plain = await runWithoutUserNamespaces([
      '--ro',
      ro,
      '--rw',
      rw,
      '--deny',
      '/root',
      '--tmp',
      tmp,
      '--',
      '/usr/bin/touch',
      `${rw}/ran`,
    ]);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(existsSync(join(rw, 'ran'))).toBe(true);
  });

  test('a command that cannot be executed exits 127 after sandboxing, which is not a refusal', async () => {
    const { spec } = fixture();
    const launch = wrapInSandbox(spec, ['/nonexistent-program']);
    const r = await collect(spawn(launch.file, launch.args, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    expect(r.code).toBe(127);
    expect(r.stderr).toMatch(/^letkite-sandbox: exec failed: /);
    expect(sandboxRefusal(r.code, r.stderr)).toBeUndefined();
  });

  test("a command's own exit 125 is not mistaken for a refusal", async () => {
    const r = await runSandboxed(fixture().spec, 'echo oops >&2; exit 125');
    expect(r.code).toBe(125);
    expect(sandboxRefusal(r.code, r.stderr)).toBeUndefined();
  });

  test('a probe without Landlock, without TCP control or without user namespaces refuses a spec that needs them', () => {
    const { spec } = fixture();
    const good: SandboxProbe = { available: true, abi: 7, userns: true, mountns: true, net: true, scoped: true };
    const cases: [SandboxProbe, SandboxSpec][] = [
      [{ ...good, available: false, abi: 0, reason: 'Landlock is not enabled in this kernel' }, spec],
      [{ ...good, abi: 3, net: false, scoped: false }, spec],
      [{ ...good, userns: false, mountns: false }, spec],
    ];
    for (const [probe, s] of cases)
      expect(() => assertSandboxUsable(probe, s)).toThrow(expect.objectContaining({ code: 'unsupported' }));
    expect(() => assertSandboxUsable({ ...good, abi: 3, net: false }, { ...spec, allowTcp: true })).not.toThrow();
    expect(() => assertSandboxUsable({ ...good, mountns: false }, { ...spec, denyPaths: [] })).not.toThrow();
  });
});
