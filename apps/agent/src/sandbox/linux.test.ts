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
  type SandboxLaunch,
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

/** Spawns a launch the way the executors do: its environment, `/` as cwd, its extra fds written and closed. */
function spawnLaunch(launch: SandboxLaunch, options: { cwd?: string } = {}): ChildProcess {
  const child = spawn(launch.file, launch.args, {
    env: launch.env,
    cwd: options.cwd ?? launch.cwd,
    stdio: ['ignore', 'pipe', 'pipe', ...launch.extraFds.map(() => 'pipe' as const)],
  });
  launch.extraFds.forEach((text, i) => {
    (child.stdio[3 + i] as NodeJS.WritableStream).end(text);
  });
  return child;
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

  test('with no TCP granted the sandbox has an empty network namespace (only loopback)', async () => {
    const r = await runSandboxed(
      fixture().spec,
      "readlink /proc/self/ns/net; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
    );
    const [ns, ...interfaces] = r.stdout.trim().split('\n');
    expect(ns).not.toBe(readlinkSync('/proc/self/ns/net'));
    expect(interfaces).toEqual(['lo']);
    const withTcp = await runSandboxed({ ...fixture().spec, allowTcp: true }, 'readlink /proc/self/ns/net');
    expect(withTcp.stdout.trim()).toBe(readlinkSync('/proc/self/ns/net'));
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
      // Its own PID namespace: the outside pid is not even there (Landlock's scoping would refuse it anyway).
      expect(r.stderr).toMatch(/Operation not permitted|No such process/);
    } finally {
      outside.kill();
    }
  });
});

describe('the helper, its init and the command', () => {
  test("the command's exit code and signal become the helper's", async () => {
    const { spec } = fixture();
    const exit = await runSandboxed(spec, 'exit 7');
    expect(exit.code).toBe(7);
    const launch = wrapInSandbox(spec, ['/bin/sh', '-c', 'kill -USR1 $$; sleep 5']);
    const child = spawn(launch.file, launch.args, { env, stdio: 'ignore' });
    const sig = await new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    expect(sig).toBe('SIGUSR1');
  });

  test('SIGTERM to the process group ends the command and everything it left running', async () => {
    const { spec, rw } = fixture();
    const launch = wrapInSandbox(spec, ['/bin/sh', '-c', `(sleep 3; touch ${rw}/survived) & echo started; sleep 30`]);
    const child = spawn(launch.file, launch.args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise((resolve) => child.stdout?.once('data', resolve));
    const started = Date.now();
    process.kill(-(child.pid as number), 'SIGTERM');
    const sig = await new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    expect(sig).toBe('SIGTERM');
    expect(Date.now() - started).toBeLessThan(2000);
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(existsSync(join(rw, 'survived'))).toBe(false);
  });

  test('a background process does not outlive the command (the PID namespace ends with it)', async () => {
    const { spec, rw } = fixture();
    const r = await runSandboxed(spec, `(sleep 1; touch ${rw}/late) >/dev/null 2>&1 & echo done`);
    expect(r).toMatchObject({ code: 0, stdout: 'done\n' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(existsSync(join(rw, 'late'))).toBe(false);
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

  test('a deny path it cannot even reach (under a 0700 dir of another owner) needs no hiding, and stays unreadable', async () => {
    const { spec } = fixture(NOBODY);
    const closed = mkdtempSync(join(tmpdir(), 'letkite-sbx-closed-'));
    roots.push(closed);
    mkdirSync(join(closed, 'keys'));
    writeFileSync(join(closed, 'keys', 'id'), 'CLOSED-SECRET');
    chmodSync(closed, 0o700);
    const r = await runSandboxed(
      { ...spec, readPaths: [...spec.readPaths, closed], denyPaths: [...spec.denyPaths, join(closed, 'keys')] },
      `cat ${closed}/keys/id; echo "[$?]"`,
      { uid: NOBODY },
    );
    expect(r.stdout).toBe('[1]\n');
    expect(r.stderr).toMatch(/Permission denied/);
  });

  test('has no capabilities and no_new_privs', async () => {
    const r = await runSandboxed(fixture(NOBODY).spec, 'grep -E "^(CapEff|CapPrm|NoNewPrivs)" /proc/self/status', {
      uid: NOBODY,
    });
    expect(r.stdout).toBe('CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\n');
  });
});

const PY = '/usr/bin/python3';

describe('escapes (issue #10): each attack fails and leaves nothing behind', () => {
  let lib: string;
  let outsideDir: string;
  beforeAll(() => {
    outsideDir = mkdtempSync(join(tmpdir(), 'letkite-sbx-outside-'));
    roots.push(outsideDir);
    const src = join(outsideDir, 'evil.c');
    lib = join(outsideDir, 'evil.so');
    writeFileSync(
      src,
      '#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void evil(void) {\n' +
        '  const char *m = getenv("EVIL_MARKER"); if (!m) return;\n' +
        '  FILE *f = fopen(m, "a"); if (f) { fputs("pwned\\n", f); fclose(f); }\n}\n',
    );
    execFileSync('cc', ['-shared', '-fPIC', '-o', lib, src]);
    chmodSync(outsideDir, 0o755);
  });

  test('LD_PRELOAD in the helper environment never runs code outside the sandbox', async () => {
    const { spec } = fixture();
    const marker = join(outsideDir, `marker-${unique()}`);
    const launch = wrapInSandbox(spec, ['/bin/true']);
    const r = await collect(
      spawn(launch.file, launch.args, {
        env: { ...env, LD_PRELOAD: lib, EVIL_MARKER: marker },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    expect(existsSync(marker), JSON.stringify(r)).toBe(false);
    expect(r.code).toBe(SANDBOX_REFUSED_EXIT);
  });

  test('the helper is statically linked, so no loader variable can ever touch it', async () => {
    const elf = readFileSync(helper);
    // A dynamically linked ELF has a PT_INTERP program header (the loader that reads LD_PRELOAD & co.).
    const phoff = Number(elf.readBigUInt64LE(0x20));
    const phentsize = elf.readUInt16LE(0x36);
    const phnum = elf.readUInt16LE(0x38);
    const types = Array.from({ length: phnum }, (_, i) => elf.readUInt32LE(phoff + i * phentsize));
    expect(types.length).toBeGreaterThan(0);
    expect(types).not.toContain(3); // PT_INTERP
    expect((await probeSandbox()).static).toBe(true);
  });

  test("the request's environment reaches only the command, through a pipe, never the command line", async () => {
    const { spec } = fixture();
    const launch = wrapInSandbox(
      spec,
      ['/bin/sh', '-c', 'echo "[$GREETING]"; cat /proc/$PPID/cmdline | tr "\\0" " "'],
      {
        env: { PATH: '/usr/bin:/bin', GREETING: 'secret-greeting' },
      },
    );
    expect(launch.args.join(' ')).not.toContain('secret-greeting');
    expect(Object.keys(launch.env)).toEqual(['PATH']);
    const r = await collect(spawnLaunch(launch));
    const [greeting, cmdline] = r.stdout.split('\n');
    expect(greeting).toBe('[secret-greeting]');
    expect(cmdline).toContain('--env-fd 3');
    expect(cmdline).not.toContain('secret-greeting');
    expect(r.code).toBe(0);
  });

  test('a loader variable given for the command is refused by the helper itself', async () => {
    const { spec } = fixture();
    const marker = join(outsideDir, `marker-${unique()}`);
    const extras: Record<string, string>[] = [
      { LD_PRELOAD: lib },
      { GCONV_PATH: outsideDir },
      { GLIBC_TUNABLES: 'x=1' },
      { MALLOC_CHECK_: '3' },
    ];
    for (const extra of extras) {
      const launch = wrapInSandbox(spec, ['/bin/sh', '-c', `touch ${marker}`], {
        env: { PATH: '/usr/bin:/bin', EVIL_MARKER: marker, ...extra },
      });
      const r = await collect(spawnLaunch(launch));
      expect(r.code, JSON.stringify(r)).toBe(SANDBOX_REFUSED_EXIT);
      expect(r.stderr).toMatch(/^letkite-sandbox: environment refused: /);
      expect(sandboxRefusal(r.code, r.stderr)?.code).toBe('blocked_by_policy');
    }
    expect(existsSync(marker)).toBe(false);
  });

  test('a cwd inside a denied directory sees the empty hiding mount, not the secret', async () => {
    const { spec, ro } = fixture();
    const launch = wrapInSandbox(spec, ['/bin/sh', '-c', 'cat token; ls -A; pwd']);
    const r = await collect(
      spawn(launch.file, launch.args, { env, cwd: join(ro, 'secret'), stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    expect(r.stdout + r.stderr).not.toContain('TOP-SECRET');
    expect(r.stdout).toBe(`${join(ro, 'secret')}\n`);
  });

  test('--cwd is entered after the hiding; one that exists only on the host is refused clearly', async () => {
    const { spec, ro } = fixture();
    const hidden = wrapInSandbox(spec, ['/bin/sh', '-c', 'cat token; pwd'], { cwd: join(ro, 'secret') });
    expect(hidden.cwd).toBe('/');
    const r = await collect(spawn(hidden.file, hidden.args, { env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] }));
    expect(r.stdout + r.stderr).not.toContain('TOP-SECRET');
    mkdirSync(join(ro, 'secret', 'sub'));
    const sub = wrapInSandbox(spec, ['/bin/echo', 'ran'], { cwd: join(ro, 'secret', 'sub') });
    const s = await collect(spawn(sub.file, sub.args, { env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] }));
    expect(s.code).toBe(SANDBOX_REFUSED_EXIT);
    expect(s.stdout).toBe('');
    expect(s.stderr).toMatch(/^letkite-sandbox: cwd unavailable: /);
    expect(sandboxRefusal(s.code, s.stderr)?.code).toBe('not_found');
  });

  describe('sockets', () => {
    let server: Server;
    let path: string;
    let accepted = 0;
    let udp: import('node:dgram').Socket;
    let udpPort: number;
    let datagrams = 0;
    let tcpPort: number;
    let tcp: Server;
    beforeAll(async () => {
      path = join(outsideDir, 'srv.sock');
      server = createServer((s) => {
        accepted++;
        s.end('hello-from-outside\n');
      });
      await new Promise<void>((resolve) => server.listen(path, resolve));
      const dgram = await import('node:dgram');
      udp = dgram.createSocket('udp4');
      udp.on('message', () => {
        datagrams++;
      });
      await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
      udpPort = udp.address().port;
      tcp = createServer((s) => {
        s.on('error', () => {}); // a refused or reset client is what some tests expect
        s.end('tcp-ok\n');
      });
      await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
      tcpPort = (tcp.address() as { port: number }).port;
    });
    afterAll(async () => {
      udp.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    });

    const unixConnect = () =>
      `${PY} -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('${path}'); print(s.recv(100))"`;

    test.each([
      ['no network', false],
      ['some TCP ports', 'ports'],
      ['all TCP', true],
    ] as const)('a pathname Unix socket outside the grants is unreachable (%s)', async (_name, tcpGrant) => {
      const allowTcp = tcpGrant === 'ports' ? [tcpPort] : tcpGrant;
      const r = await runSandboxed({ ...fixture().spec, readPaths: ['/'], allowTcp }, unixConnect());
      expect(r.stdout).not.toContain('hello-from-outside');
      expect(accepted).toBe(0);
    });

    test('the real PostgreSQL socket cannot be reached (COPY … TO PROGRAM would run outside the sandbox)', async () => {
      if (!existsSync('/var/run/postgresql/.s.PGSQL.5432')) return;
      const marker = join(tmpdir(), `letkite-pg-${unique()}`);
      const r = await runSandboxed(
        { ...fixture().spec, readPaths: ['/'], allowTcp: true },
        `psql -h /var/run/postgresql -U postgres -d postgres -c "COPY (SELECT 1) TO PROGRAM 'touch ${marker}'"`,
      );
      expect(existsSync(marker), JSON.stringify(r)).toBe(false);
    });

    test('socketpair still works', async () => {
      const r = await runSandboxed(
        fixture().spec,
        `${PY} -c "import socket; a,b=socket.socketpair(); a.send(b'ok'); print(b.recv(2))"`,
      );
      expect(r).toMatchObject({ code: 0, stdout: "b'ok'\n" });
    });

    test.each([
      ['no network', false],
      ['some TCP ports', 'ports'],
      ['all TCP', true],
    ] as const)('UDP datagrams do not leave the sandbox (%s)', async (_name, tcpGrant) => {
      const allowTcp = tcpGrant === 'ports' ? [tcpPort] : tcpGrant;
      await runSandboxed(
        { ...fixture().spec, allowTcp },
        `${PY} -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', ${udpPort}))"; echo x > /dev/udp/127.0.0.1/${udpPort}`,
        { shell: '/bin/bash' },
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(datagrams).toBe(0);
    });

    test.each([
      ['raw ICMP', 'socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP'],
      ['packet', 'socket.AF_PACKET, socket.SOCK_RAW, 0'],
      ['netlink audit', 'socket.AF_NETLINK, socket.SOCK_RAW, 9'],
      ['SCTP stream', 'socket.AF_INET, socket.SOCK_STREAM, 132'],
      ['vsock', '40, socket.SOCK_STREAM, 0'],
    ])('a %s socket is refused even with all TCP allowed', async (_name, args) => {
      const r = await runSandboxed(
        { ...fixture().spec, allowTcp: true },
        `${PY} -c "import socket; socket.socket(${args}); print('opened')"`,
      );
      expect(r.stdout).not.toContain('opened');
      expect(r.stderr).toMatch(/PermissionError|OSError/);
    });

    test('granted TCP still works; a TCP Fast Open send to another port does not connect', async () => {
      const ok = await runSandboxed(
        { ...fixture().spec, allowTcp: [tcpPort] },
        `exec 3<>/dev/tcp/127.0.0.1/${tcpPort} && head -c 6 <&3`,
        { shell: '/bin/bash' },
      );
      expect(ok).toMatchObject({ code: 0, stdout: 'tcp-ok' });
      const tfo = await runSandboxed(
        { ...fixture().spec, allowTcp: [tcpPort === 1 ? 2 : tcpPort - 1] },
        `${PY} -c "import socket; s=socket.socket(); s.sendto(b'x', socket.MSG_FASTOPEN, ('127.0.0.1', ${tcpPort})); print('sent', s.recv(6))"`,
      );
      expect(tfo.stdout).not.toContain('tcp-ok');
    });
  });

  describe('root inside the sandbox', () => {
    test('has no capabilities at all', async () => {
      const r = await runSandboxed(fixture().spec, 'grep -E "^Cap" /proc/self/status; id -u');
      expect(r.stdout).toBe(
        'CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n0\n',
      );
    });

    test('cannot set the hostname or the clock, and the host is unchanged', async () => {
      const before = readFileSync('/proc/sys/kernel/hostname', 'utf8');
      const r = await runSandboxed(fixture().spec, 'hostname sandbox-escaped; date -s "2001-01-01"; echo done');
      expect(r.stdout).toContain('done');
      expect(r.stderr).toMatch(/Operation not permitted|must be root/);
      expect(readFileSync('/proc/sys/kernel/hostname', 'utf8')).toBe(before);
      expect(new Date().getFullYear()).toBeGreaterThan(2020);
    });

    test("sees only its own processes: another process's /proc/<pid>/environ is out of reach", async () => {
      const marker = `outside-env-${unique()}`;
      const outside = spawn('/bin/sleep', ['30'], { env: { SECRET_MARKER: marker } });
      try {
        const r = await runSandboxed(
          fixture().spec,
          `cat /proc/${outside.pid}/environ; cat /proc/*/environ; echo; ls /proc | grep -c "^[0-9]"`,
        );
        expect(r.stdout + r.stderr).not.toContain(marker);
        expect(Number(r.stdout.trim().split('\n').pop())).toBeLessThan(6);
      } finally {
        outside.kill();
      }
    });

    test('cannot make a new user namespace (to gain capabilities over fresh namespaces), but threads work', async () => {
      const r = await runSandboxed(
        fixture().spec,
        `unshare -Ur id; echo "[$?]"; ${PY} -c "import threading; t=threading.Thread(target=print, args=('thread',)); t.start(); t.join()"`,
      );
      expect(r.stdout).toBe('[1]\nthread\n');
      expect(r.stderr).toMatch(/unshare failed: Operation not permitted/);
    });

    test('cannot read the keyring or use io_uring', async () => {
      const r = await runSandboxed(
        fixture().spec,
        `${PY} -c "import ctypes; l=ctypes.CDLL(None); print('io_uring', l.syscall(425, 4, ctypes.create_string_buffer(120)))"`,
      );
      expect(r.stdout).toBe('io_uring -1\n');
    });
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
    // …and still under seccomp and without capabilities: no Unix or UDP socket, no inet socket without TCP.
    const sockets = await runWithoutUserNamespaces([
      '--ro',
      '/',
      '--tmp',
      tmp,
      '--',
      PY,
      '-c',
      [
        'import socket',
        'for args in [(socket.AF_UNIX,), (socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET,)]:',
        '  try: socket.socket(*args); print("opened", args)',
        '  except PermissionError: print("refused")',
        'print(open("/proc/self/status").read().count("CapEff:\t0000000000000000"))',
      ].join('\n'),
    ]);
    expect(sockets).toMatchObject({ code: 0, stdout: 'refused\nrefused\nrefused\n1\n' });
  });

  test('a probe that reports no seccomp makes the sandbox unavailable, with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'letkite-sbx-probe-'));
    roots.push(dir);
    const fake = join(dir, 'helper');
    // Stands in for a kernel without seccomp filters (this machine has them): the real helper prints this shape.
    writeFileSync(
      fake,
      `#!/bin/sh\necho '{"abi":7,"landlock":true,"min_abi":3,"net":true,"scoped":true,"userns":true,"mountns":true,"pidns":true,"netns":true,"seccomp":false,"static":true,"euid":0}'\n`,
      { mode: 0o755 },
    );
    const probe = await probeSandbox({ helperPath: fake });
    expect(probe).toMatchObject({ available: false, seccomp: false });
    expect(probe.reason).toMatch(/seccomp/);
    expect(() => assertSandboxUsable(probe, fixture().spec)).toThrow(expect.objectContaining({ code: 'unsupported' }));
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
    const good: SandboxProbe = {
      available: true,
      abi: 7,
      userns: true,
      mountns: true,
      net: true,
      scoped: true,
      pidns: true,
      netns: true,
      seccomp: true,
      static: true,
      euid: 0,
    };
    const cases: [SandboxProbe, SandboxSpec][] = [
      [{ ...good, available: false, abi: 0, reason: 'Landlock is not enabled in this kernel' }, spec],
      [{ ...good, abi: 3, net: false, scoped: false }, spec],
      [{ ...good, userns: false, mountns: false }, spec],
      [{ ...good, available: false, seccomp: false, reason: 'seccomp filters are unavailable' }, spec],
    ];
    for (const [probe, s] of cases)
      expect(() => assertSandboxUsable(probe, s)).toThrow(expect.objectContaining({ code: 'unsupported' }));
    expect(() => assertSandboxUsable({ ...good, abi: 3, net: false }, { ...spec, allowTcp: true })).not.toThrow();
    expect(() => assertSandboxUsable({ ...good, mountns: false }, { ...spec, denyPaths: [] })).not.toThrow();
    // The network namespace is a second layer: seccomp refuses every inet socket when no TCP is granted.
    expect(() => assertSandboxUsable({ ...good, netns: false }, spec)).not.toThrow();
  });
});
