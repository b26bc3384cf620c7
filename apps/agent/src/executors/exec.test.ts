import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecParams } from '@letkite/protocol';
import { afterAll, describe, expect, test } from 'vitest';
import { type LaunchPlan, runExec, spawnHere } from './exec';
import { type Launch, LauncherClient } from './launcher-client';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const params = (over: Partial<ExecParams> = {}) =>
  ({ timeout_ms: 10_000, max_output_bytes: 1024, ...over }) as ExecParams;
const sh = (script: string, extra: Partial<LaunchPlan> = {}): LaunchPlan => ({
  file: 'sh',
  args: ['-c', script],
  env,
  ...extra,
});

/** Whether a process runs (on Linux, a zombie waiting for its reaper does not). */
function running(pid: number): boolean {
  try {
    if (existsSync('/proc/self/stat')) return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const client = new LauncherClient(undefined, () => {});
afterAll(() => client.stop());

async function viaLauncher(): Promise<Launch> {
  const launch = await client.acquire();
  if (!launch) throw new Error('the launcher did not start');
  return launch;
}

describe.each([
  ['launcher', viaLauncher],
  ['in-process', async () => spawnHere],
] as const)('runExec (%s)', (_name, launchFor) => {
  test('exit code, stdout and stderr', async () => {
    const r = await runExec(params(), sh('echo out; echo err >&2; exit 3'), undefined, await launchFor());
    expect(r).toMatchObject({ exit_code: 3, signal: null, stdout: 'out\n', stderr: 'err\n', timed_out: false });
    expect(r.truncated).toBe(false);
  });

  test('feeds stdin and closes it', async () => {
    const r = await runExec(params({ stdin: 'hello' }), { file: 'cat', args: [], env }, undefined, await launchFor());
    expect(r.stdout).toBe('hello');
  });

  test('keeps the newest output bytes', async () => {
    const r = await runExec(params({ max_output_bytes: 4 }), sh('printf abcdefgh'), undefined, await launchFor());
    expect(r.stdout).toBe('efgh');
    expect(r.truncated).toBe(true);
  });

  test('a missing program is 127 with the reason on stderr', async () => {
    const r = await runExec(params(), { file: 'no-such-program-lk', args: [], env }, undefined, await launchFor());
    expect(r.exit_code).toBe(127);
    expect(r.stderr).toBe('letkite: no-such-program-lk: command not found\n');
  });

  test('passes extra file descriptors', async () => {
    const r = await runExec(params(), sh('cat <&3', { extraFds: ['spec'] }), undefined, await launchFor());
    expect(r.stdout).toBe('spec');
  });

  test('starts in cwd, with exactly the given environment', async () => {
    const r = await runExec(
      params({ cwd: '/' }),
      sh('pwd; echo "$LK_X"', { env: { ...env, LK_X: 'y' } }),
      undefined,
      await launchFor(),
    );
    expect(r.stdout).toBe('/\ny\n');
  });

  test('a timeout ends the whole process group', async () => {
    const r = await runExec(params({ timeout_ms: 300 }), sh('sleep 30 & echo $!; wait'), undefined, await launchFor());
    expect(r.timed_out).toBe(true);
    expect(r.signal).toBe('SIGTERM');
    const bg = Number(r.stdout.trim());
    await expect.poll(() => running(bg)).toBe(false);
  });

  test('cancellation ends the command', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await runExec(params(), { file: 'sleep', args: ['30'], env }, ac.signal, await launchFor());
    expect(r.signal).toBe('SIGTERM');
    expect(r.timed_out).toBe(false);
    expect(r.duration_ms).toBeLessThan(5_000);
  });

  test('a background process holding the pipes is killed shortly after the command exits', async () => {
    const r = await runExec(params(), sh('sleep 30 & echo $!'), undefined, await launchFor());
    expect(r.exit_code).toBe(0);
    expect(r.duration_ms).toBeLessThan(5_000);
    const bg = Number(r.stdout.trim());
    await expect.poll(() => running(bg)).toBe(false);
  });
});

describe('the launcher', () => {
  test('if it dies, the commands in flight fail and their groups are killed; the next command restarts it', async () => {
    const own = new LauncherClient(undefined, () => {});
    try {
      const launch = await own.acquire();
      expect(launch).not.toBeNull();
      const firstPid = own.pid;
      const running = runExec(params(), sh('echo $$; sleep 30'), undefined, launch ?? undefined);
      await new Promise((r) => setTimeout(r, 300));
      process.kill(firstPid ?? 0, 'SIGKILL');
      await expect(running).rejects.toThrow(/launcher exited/);
      const again = await own.acquire();
      expect(again).not.toBeNull();
      expect(own.pid).not.toBe(firstPid);
      const r = await runExec(params(), { file: 'true', args: [], env }, undefined, again ?? undefined);
      expect(r.exit_code).toBe(0);
    } finally {
      own.stop();
    }
  });

  test('when it cannot start, acquire() says so and callers spawn in-process', async () => {
    const logs: string[] = [];
    const broken = new LauncherClient(join(import.meta.dirname, 'no-such-launcher'), (m) => logs.push(m));
    expect(await broken.acquire()).toBeNull();
    expect(await broken.acquire()).toBeNull(); // no restart loop: retried only after a pause
    expect(logs.join('\n')).toMatch(/spawning commands in the agent process/);
    // Once, naming the missing binary and how to build it.
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain(join(import.meta.dirname, 'no-such-launcher'));
    expect(logs[0]).toContain('npm run build -w @letkite/agent');
  });

  test('a launcher that is not a program is reported, and callers spawn in-process', async () => {
    const logs: string[] = [];
    const broken = new LauncherClient(import.meta.dirname, (m) => logs.push(m));
    expect(await broken.acquire()).toBeNull();
    expect(logs.join('\n')).toMatch(/EACCES.*spawning commands in the agent process/);
  });

  test('runs a program as another account (when the agent may switch users)', async () => {
    if (process.getuid?.() !== 0) return;
    const r = await runExec(
      params({ cwd: '/' }),
      { file: 'id', args: ['-u'], env, uid: 65534, gid: 65534 },
      undefined,
      await viaLauncher(),
    );
    expect(r.stdout).toBe('65534\n');
  });
});
