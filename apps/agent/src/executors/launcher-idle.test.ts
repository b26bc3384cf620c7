import { existsSync, readFileSync } from 'node:fs';
import type { ExecParams } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { type LaunchPlan, runExec, spawnHere } from './exec';
import { DEFAULT_IDLE_MS, idleFromEnv, LauncherClient } from './launcher-client';

// The launcher exits after an idle time (issue #13) and the next command starts a fresh one. Real processes.

const IDLE_MS = 300;
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const params = (over: Partial<ExecParams> = {}) =>
  ({ timeout_ms: 20_000, max_output_bytes: 1024, ...over }) as ExecParams;
const sh = (script: string): LaunchPlan => ({ file: 'sh', args: ['-c', script], env });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a process runs (a zombie waiting for its reaper does not). */
function running(pid: number): boolean {
  try {
    if (existsSync('/proc/self/stat')) return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** What exec.ts does for each command: acquire, then run through the launcher (or in-process if it is down). */
async function run(client: LauncherClient, plan: LaunchPlan) {
  const launch = await client.acquire();
  return { viaLauncher: launch !== null, result: await runExec(params(), plan, undefined, launch ?? spawnHere) };
}

describe('the launcher exits when idle', () => {
  test('LETKITE_EXEC_LAUNCHER_IDLE_MS: a number of ms, 0 for never, the default otherwise', () => {
    expect(idleFromEnv(undefined)).toBe(DEFAULT_IDLE_MS);
    expect(DEFAULT_IDLE_MS).toBe(60_000);
    expect(idleFromEnv('300')).toBe(300);
    expect(idleFromEnv('0')).toBe(0);
    expect(idleFromEnv('soon')).toBe(DEFAULT_IDLE_MS);
    expect(idleFromEnv('-5')).toBe(DEFAULT_IDLE_MS);
  });

  test('it exits after the idle time; the next command runs through a fresh launcher', async () => {
    const client = new LauncherClient(undefined, () => {}, IDLE_MS);
    try {
      const first = await run(client, sh('echo one'));
      expect(first).toMatchObject({ viaLauncher: true, result: { exit_code: 0, stdout: 'one\n' } });
      const firstPid = client.pid;
      expect(firstPid).toBeGreaterThan(0);
      await expect.poll(() => running(firstPid ?? 0), { timeout: 10_000, interval: 50 }).toBe(false);
      expect(client.pid).toBeUndefined();

      const second = await run(client, sh('echo two'));
      expect(second).toMatchObject({ viaLauncher: true, result: { exit_code: 0, stdout: 'two\n' } });
      const secondPid = client.pid;
      expect(secondPid).toBeGreaterThan(0);
      expect(secondPid).not.toBe(firstPid);
      expect(running(secondPid ?? 0)).toBe(true);
    } finally {
      client.stop();
    }
  });

  test('0 keeps it for good', async () => {
    const client = new LauncherClient(undefined, () => {}, 0);
    try {
      await run(client, sh('true'));
      const pid = client.pid ?? 0;
      await sleep(IDLE_MS * 3);
      expect(running(pid)).toBe(true);
      expect(client.pid).toBe(pid);
    } finally {
      client.stop();
    }
  });

  test('a command in flight keeps it alive past the idle time', async () => {
    const client = new LauncherClient(undefined, () => {}, IDLE_MS);
    try {
      const launch = await client.acquire();
      expect(launch).not.toBeNull();
      const pid = client.pid ?? 0;
      const r = await runExec(params(), sh('sleep 1; echo slept'), undefined, launch ?? undefined);
      expect(r).toMatchObject({ exit_code: 0, stdout: 'slept\n' });
      expect(r.duration_ms).toBeGreaterThanOrEqual(1_000);
      // Over three idle times went by while it ran: the same launcher is still there.
      expect(running(pid)).toBe(true);
      expect(client.pid).toBe(pid);
      // And once idle, it goes.
      await expect.poll(() => running(pid), { timeout: 10_000, interval: 50 }).toBe(false);
    } finally {
      client.stop();
    }
  });

  test('a Launch taken before the launcher retired goes to a fresh one', async () => {
    const client = new LauncherClient(undefined, () => {}, IDLE_MS);
    try {
      const stale = await client.acquire();
      expect(stale).not.toBeNull();
      const pid = client.pid ?? 0;
      await expect.poll(() => running(pid), { timeout: 10_000, interval: 50 }).toBe(false);
      const r = await runExec(params(), sh('echo late'), undefined, stale ?? undefined);
      expect(r).toMatchObject({ exit_code: 0, stdout: 'late\n' });
      expect(client.pid).toBeGreaterThan(0);
      expect(client.pid).not.toBe(pid);
    } finally {
      client.stop();
    }
  });

  test('20 commands fired around the idle boundary all complete', async () => {
    const client = new LauncherClient(undefined, () => {}, IDLE_MS);
    try {
      const pids = new Set<number>();
      // Four rounds of five: after a command ends, the idle countdown starts; each round fires its five at the
      // moment it ends, give or take a few ms (the last round after it, so a retirement surely comes first).
      const rounds = [
        [-12, -4, 0, 3, 9],
        [-2, 0, 1, 2, 6],
        [-6, 0, 0, 5, 15],
        [25, 26, 28, 30, 40],
      ];
      let n = 0;
      for (const offsets of rounds) {
        await run(client, sh('true'));
        const runs = offsets.map((offset) => {
          const i = n++;
          return sleep(IDLE_MS + offset).then(async () => {
            const r = await run(client, sh(`echo ${i}`));
            if (client.pid) pids.add(client.pid);
            return { i, ...r };
          });
        });
        for (const { i, viaLauncher, result } of await Promise.all(runs)) {
          expect(result).toMatchObject({ exit_code: 0, stdout: `${i}\n`, timed_out: false });
          // Through a launcher (the old or a fresh one), never the in-process fallback.
          expect(viaLauncher).toBe(true);
        }
      }
      expect(n).toBe(20);
      expect(pids.size).toBeGreaterThanOrEqual(2);
    } finally {
      client.stop();
    }
  });
});
