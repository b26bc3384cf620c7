import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecParams } from '@letkite/protocol';
import { afterAll, describe, expect, test } from 'vitest';
import { probeSandbox, wrapInSandbox } from '../sandbox';
import { runExec, spawnHere } from './exec';
import { type Launch, LauncherClient, type LaunchRequest, launcherPath } from './launcher-client';

// The C launcher (native/letkite-launch.c) against Node's own spawn (spawnHere): real processes, the same
// requests through both, the same events expected. Needs the built binary (`npm run build -w @letkite/agent`).

const env = { PATH: '/usr/bin:/bin' };
const tmp = mkdtempSync(join(tmpdir(), 'letkite-launch-test-'));
const client = new LauncherClient(undefined, () => {}, 0);
afterAll(() => {
  client.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const req = (over: Partial<LaunchRequest>): LaunchRequest => ({
  file: 'sh',
  args: [],
  cwd: undefined,
  env,
  extraFds: [],
  stdin: undefined,
  max: 1024,
  ...over,
});
const sh = (script: string, over: Partial<LaunchRequest> = {}) => req({ args: ['-c', script], ...over });

async function viaLauncher(): Promise<Launch> {
  const launch = await client.acquire();
  if (!launch) throw new Error(`the launcher did not start (is ${launcherPath()} built?)`);
  return launch;
}

/** Everything a launch reported, in order; the output as text. */
interface Trace {
  events: string[];
  pid?: number;
  stdout: string;
  stderr: string;
  stdoutCut?: boolean;
  stderrCut?: boolean;
}

function trace(launch: Launch, r: LaunchRequest): Promise<Trace> {
  return new Promise((resolve) => {
    const t: Trace = { events: [], stdout: '', stderr: '' };
    launch(r, {
      pid: (pid) => {
        t.pid = pid;
        t.events.push('pid');
      },
      error: (code) => t.events.push(`error ${code}`),
      exit: (code, sig) => t.events.push(`exit ${code} ${sig}`),
      close: (code, sig, out) => {
        t.events.push(`close ${code} ${sig}`);
        Object.assign(t, {
          stdout: out.stdout.toString(),
          stderr: out.stderr.toString(),
          stdoutCut: out.stdoutCut,
          stderrCut: out.stderrCut,
        });
        resolve(t);
      },
      fail: (err) => {
        const e = err as NodeJS.ErrnoException;
        t.events.push(`fail ${e.name} ${e.code}${e.syscall ? ` ${e.message}` : ''}`);
        resolve(t);
      },
    });
  });
}

/** The launcher's trace, after checking it is exactly what Node's spawn reports for the same request. */
async function likeNode(r: LaunchRequest): Promise<Trace> {
  const [native, node] = await Promise.all([trace(await viaLauncher(), r), trace(spawnHere, r)]);
  const { pid: _a, ...nativeRest } = native;
  const { pid: _b, ...nodeRest } = node;
  expect(nativeRest).toEqual(nodeRest);
  return native;
}

/** Whether a process runs (a zombie waiting for its reaper does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('output', () => {
  test.each([
    ['exactly max bytes, in two writes: kept whole, not cut', 'printf ab; sleep 0.05; printf cd', 4, 'abcd', false],
    ['one byte more: the newest max bytes, cut', 'printf ab; sleep 0.05; printf cde', 4, 'bcde', true],
    ['one write of exactly max bytes after others: cut', 'printf a; sleep 0.05; printf wxyz', 4, 'wxyz', true],
    ['nothing written', 'true', 4, '', false],
  ])('%s', async (_name, script, max, tail, cut) => {
    const t = await likeNode(sh(`${script}; (${script}) >&2`, { max }));
    expect(t).toMatchObject({ stdout: tail, stderr: tail, stdoutCut: cut, stderrCut: cut });
    expect(t.events).toEqual(['pid', 'exit 0 null', 'close 0 null']);
  });

  test('megabytes through a small tail keep exactly the newest bytes, across the ring wrapping', async () => {
    const script = 'i=0; while [ $i -lt 3000 ]; do printf "line %05d ........................\\n" $i; i=$((i+1)); done';
    const t = await likeNode(sh(script, { max: 1000 }));
    expect(t.stdout).toHaveLength(1000);
    expect(t.stdout.endsWith('line 02999 ........................\n')).toBe(true);
    expect(t.stdoutCut).toBe(true);
  });
});

describe('inputs', () => {
  test('stdin is fed whole, as the command reads it, then closed', async () => {
    const stdin = 'x'.repeat(3 << 20);
    const t = await trace(await viaLauncher(), req({ file: 'wc', args: ['-c'], stdin }));
    expect(t.stdout.trim()).toBe(String(3 << 20));
    expect(t.events).toEqual(['pid', 'exit 0 null', 'close 0 null']);
  });

  test('a command that stops reading its stdin (EPIPE) is no error; the launcher goes on', async () => {
    const t = await likeNode(req({ file: 'head', args: ['-c', '3'], stdin: 'abcdef'.repeat(1 << 20) }));
    expect(t).toMatchObject({ stdout: 'abc', events: ['pid', 'exit 0 null', 'close 0 null'] });
    const pid = client.pid;
    expect((await trace(await viaLauncher(), sh('echo still'))).stdout).toBe('still\n');
    expect(client.pid).toBe(pid);
  });

  test('no stdin: the command reads EOF at once', async () => {
    expect((await likeNode(req({ file: 'cat' }))).events).toEqual(['pid', 'exit 0 null', 'close 0 null']);
  });

  test('extra fds from 3 on, each with its bytes; one without data reads EOF', async () => {
    const t = await trace(
      await viaLauncher(),
      sh('cat <&3; echo; cat <&4; echo; cat <&5; echo; echo end', { extraFds: ['three', null, 'five'] }),
    );
    expect(t.stdout).toBe('three\n\nfive\nend\n');
  });

  test('the sandbox helper gets its spec and the environment on fd 3', async () => {
    const probe = await probeSandbox();
    if (!probe.available) return; // no Landlock here: linux.test.ts covers the refusal
    const dir = mkdtempSync(join(tmp, 'sbx-'));
    const spec = { readPaths: [], writePaths: [], denyPaths: [], tmpDir: dir, allowTcp: false as const };
    const launch = wrapInSandbox(spec, ['/bin/sh', '-c', 'echo "$LK_SECRET_ENV" "$TMPDIR"; pwd'], {
      env: { ...env, LK_SECRET_ENV: 'only-inside', TMPDIR: dir },
      cwd: '/usr',
    });
    const params = { timeout_ms: 20_000, max_output_bytes: 1024 } as ExecParams;
    const r = await runExec(params, { ...launch }, undefined, await viaLauncher());
    expect(r).toMatchObject({ exit_code: 0, stdout: `only-inside ${dir}\n/usr\n` });
  });
});

describe('exit', () => {
  test.each([
    ['an exit code', 'exit 3', 'exit 3 null'],
    ['SIGTERM', 'kill -TERM $$', 'exit null SIGTERM'],
    ['SIGKILL', 'kill -KILL $$', 'exit null SIGKILL'],
    ['SIGSEGV', 'kill -SEGV $$', 'exit null SIGSEGV'],
    ['SIGPIPE, which the launcher ignores but the command must not', 'kill -PIPE $$', 'exit null SIGPIPE'],
    ['a signal the command inherited as ignored is default again', 'trap - INT; kill -INT $$', 'exit null SIGINT'],
  ])('%s', async (_name, script, exit) => {
    const t = await likeNode(sh(script));
    expect(t.events).toEqual(['pid', exit, `close ${exit.slice(5)}`]);
  });
});

describe('spawn failures, as Node reports them', () => {
  const notExecutable = join(tmp, 'not-executable');
  writeFileSync(notExecutable, '#!/bin/sh\necho ran\n');
  chmodSync(notExecutable, 0o644);
  const aFile = join(tmp, 'a-file');
  writeFileSync(aFile, '');

  test.each([
    ['a missing program: ENOENT', req({ file: 'no-such-program-lk' }), ['error ENOENT', 'close -2 null']],
    ['a missing absolute path: ENOENT', req({ file: join(tmp, 'none') }), ['error ENOENT', 'close -2 null']],
    ['a file without execute permission: EACCES', req({ file: notExecutable }), ['error EACCES', 'close -13 null']],
    ['a directory: EACCES', req({ file: tmp }), ['error EACCES', 'close -13 null']],
    ['a missing cwd: ENOENT', req({ file: 'true', cwd: join(tmp, 'gone') }), ['error ENOENT', 'close -2 null']],
    [
      'a cwd that is a file: spawn throws ENOTDIR',
      req({ file: 'true', cwd: aFile }),
      ['fail Error ENOTDIR spawn ENOTDIR'],
    ],
    ['a NUL byte in an argument: a TypeError', sh('echo\0x'), ['fail TypeError ERR_INVALID_ARG_VALUE']],
    ['an empty file name: a TypeError', req({ file: '' }), ['fail TypeError ERR_INVALID_ARG_VALUE']],
  ])('%s', async (_name, r, events) => {
    expect((await likeNode(r)).events).toEqual(events);
  });

  test("a bare name is searched on the command's PATH, skipping what cannot run, as execvp does", async () => {
    const [first, second] = [join(tmp, 'bin1'), join(tmp, 'bin2')];
    mkdirSync(first);
    mkdirSync(second);
    writeFileSync(join(first, 'lk-prog'), '#!/bin/sh\necho first\n', { mode: 0o644 });
    writeFileSync(join(second, 'lk-prog'), '#!/bin/sh\necho second\n', { mode: 0o755 });
    writeFileSync(join(second, 'lk-noshebang'), 'echo via-sh\n', { mode: 0o755 });
    const path = { PATH: `${join(tmp, 'nowhere')}:${first}:${second}:/usr/bin:/bin` };
    expect((await likeNode(req({ file: 'lk-prog', env: path }))).stdout).toBe('second\n');
    // ENOEXEC: glibc's execvp runs the file with /bin/sh, and so does Node's spawn.
    expect((await likeNode(req({ file: 'lk-noshebang', env: path }))).stdout).toBe('via-sh\n');
    expect((await likeNode(req({ file: 'lk-prog', env: { PATH: first } }))).events[0]).toBe('error EACCES');
  });
});

describe('the child', () => {
  test('leads its own session and process group (the agent kills the group by pid)', async () => {
    const t = await trace(await viaLauncher(), sh("echo $$; cut -d' ' -f5,6 /proc/$$/stat"));
    const [pid, ids] = t.stdout.trim().split('\n');
    expect(Number(pid)).toBe(t.pid);
    expect(ids).toBe(`${t.pid} ${t.pid}`);
  });

  test('starts in cwd with exactly the given environment', async () => {
    const t = await likeNode(sh('pwd; env | sort', { cwd: '/usr', env: { ...env, LK_X: 'y z' } }));
    expect(t.stdout).toBe(`/usr\nLK_X=y z\nPATH=${env.PATH}\nPWD=/usr\n`);
  });

  test('runs as another account with only its group (when running as root)', async () => {
    if (process.getuid?.() !== 0) return;
    const t = await likeNode(req({ file: 'id', args: [], cwd: '/', uid: 65534, gid: 65534 }));
    expect(t.stdout).toBe('uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)\n');
    const uidOnly = await likeNode(sh('id -u; id -g', { cwd: '/', uid: 65534 }));
    expect(uidOnly.stdout).toBe('65534\n0\n');
  });

  test('holds no fd of the launcher: only 0, 1, 2 and its extra fds, also with others starting alongside', async () => {
    // The shell's own fds (`ls /proc/self/fd` would list ls's directory fd too).
    const lists = await Promise.all(
      [[], ['x'], ['x', 'y'], []].map(async (extraFds) =>
        trace(await viaLauncher(), sh('sleep 0.1; ls /proc/$$/fd', { extraFds })),
      ),
    );
    expect(lists.map((t) => t.stdout.trim().split('\n').join(' '))).toEqual(['0 1 2', '0 1 2 3', '0 1 2 3 4', '0 1 2']);
  });
});

describe('the launcher process', () => {
  test('16 commands at once, each with its own output', async () => {
    const launch = await viaLauncher();
    const started = performance.now();
    const traces = await Promise.all(
      Array.from({ length: 16 }, (_, i) => trace(launch, sh(`cat; sleep 0.3; echo err${i} >&2`, { stdin: `out${i}` }))),
    );
    traces.forEach((t, i) => {
      expect(t).toMatchObject({ stdout: `out${i}`, stderr: `err${i}\n` });
      expect(t.events).toEqual(['pid', 'exit 0 null', 'close 0 null']);
    });
    expect(performance.now() - started).toBeLessThan(16 * 300);
  });

  test('if it dies mid-command, the commands fail and their groups are killed; the next one restarts it', async () => {
    const own = new LauncherClient(undefined, () => {}, 0);
    try {
      const launch = await own.acquire();
      if (!launch) throw new Error('the launcher did not start');
      const firstPid = own.pid ?? 0;
      const pids: number[] = [];
      const runs = [1, 2, 3].map(
        () =>
          new Promise<Error>((resolve) =>
            launch(sh('sleep 30 & sleep 30'), {
              pid: (p) => pids.push(p),
              error: () => {},
              exit: () => {},
              close: () => resolve(new Error('closed')),
              fail: resolve,
            }),
          ),
      );
      await expect.poll(() => pids.length).toBe(3);
      process.kill(firstPid, 'SIGKILL');
      for (const err of await Promise.all(runs)) expect(err.message).toMatch(/launcher exited/);
      for (const pid of pids) await expect.poll(() => running(pid)).toBe(false);
      const again = await own.acquire();
      expect(own.pid).not.toBe(firstPid);
      expect((await trace(again ?? spawnHere, sh('echo again'))).stdout).toBe('again\n');
    } finally {
      own.stop();
    }
  });

  test('when the agent goes, it exits and the commands it started run on', async () => {
    const done = join(tmp, 'ran-on');
    const script = `
      import { LauncherClient } from ${JSON.stringify(join(import.meta.dirname, 'launcher-client.ts'))};
      const client = new LauncherClient(undefined, () => {}, 0);
      const launch = await client.acquire();
      launch({ file: 'sh', args: ['-c', 'sleep 0.5; echo ran > ${done}'], cwd: undefined, env: { PATH: '/usr/bin:/bin' },
        extraFds: [], stdin: undefined, max: 64 }, { pid: () => { console.log(client.pid); process.exit(0); },
        error() {}, exit() {}, close() {}, fail() {} });`;
    const agent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    agent.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await new Promise((r) => agent.on('close', r));
    const launcherPid = Number(out.trim());
    expect(launcherPid).toBeGreaterThan(0);
    // Its stdin closed with the agent: it exits (reaped by init, since its parent is gone).
    await expect.poll(() => running(launcherPid), { timeout: 5_000 }).toBe(false);
    expect(existsSync(done)).toBe(false);
    await expect.poll(() => existsSync(done), { timeout: 5_000 }).toBe(true);
    expect(readFileSync(done, 'utf8')).toBe('ran\n');
  });
});
