import { LetKiteError } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import type { RelayProgress, RelayResult } from './relay';
import { TransferRegistry } from './transfer-registry';

function controllable() {
  let finish!: (r: RelayResult) => void;
  let fail!: (e: unknown) => void;
  let progress!: RelayProgress;
  let tick!: () => void;
  const run = (p: RelayProgress, _signal: AbortSignal, onProgress: () => void) => {
    progress = p;
    tick = onProgress;
    return new Promise<RelayResult>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
  };
  return {
    run,
    finish: (r: RelayResult) => finish(r),
    fail: (e: unknown) => fail(e),
    progress: () => progress,
    tick: () => tick(),
  };
}

describe('TransferRegistry', () => {
  test('reports progress with a rate while running, then the result', async () => {
    let now = 1_000_000;
    const registry = new TransferRegistry(() => now);
    const t = controllable();
    const id = registry.start('acct', t.run);
    expect(registry.status('acct', id)).toMatchObject({ state: 'running', bytes_done: 0, bytes_total: null });
    t.progress().bytesTotal = 10_000_000;
    t.progress().filesTotal = 1;
    now += 1000;
    t.progress().bytesDone = 4_000_000;
    t.tick();
    expect(registry.status('acct', id)).toMatchObject({
      bytes_done: 4_000_000,
      bytes_total: 10_000_000,
      rate_bytes_per_s: 4_000_000,
    });
    now += 1000;
    t.progress().bytesDone = 10_000_000;
    t.progress().filesDone = 1;
    t.finish({ bytes: 10_000_000, files: 1, sha256: 'f'.repeat(64), skipped: [] });
    await new Promise((r) => setImmediate(r));
    expect(registry.status('acct', id)).toMatchObject({
      state: 'done',
      files_done: 1,
      rate_bytes_per_s: 5_000_000,
      result: { bytes: 10_000_000, duration_ms: 2000 },
    });
  });

  test('a failure keeps its code; another account and unknown ids see nothing', async () => {
    const registry = new TransferRegistry();
    const t = controllable();
    const id = registry.start('acct', t.run);
    t.fail(new LetKiteError('machine_offline', 'gone'));
    await new Promise((r) => setImmediate(r));
    expect(registry.status('acct', id)).toMatchObject({ state: 'failed', error: { code: 'machine_offline' } });
    expect(registry.status('other', id)).toBeNull();
    expect(registry.status('acct', 'tr_nope')).toBeNull();
  });
});
