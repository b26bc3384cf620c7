import { LetKiteError } from '@letkite/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type TwoInstances, twoInstanceBackends } from '../store/contract/two-instance-backends';
import { PgTransferStore } from '../store/postgres/pg-transfer-store';
import { SqliteTransferStore } from '../store/sqlite/sqlite-transfer-store';
import type { RelayProgress, RelayResult } from './relay';
import { TRANSFER_STALE_MS, TRANSFER_WRITE_EVERY_MS, TransferRegistry } from './transfer-registry';
import type { TransferStore } from './transfer-store';

/** Two gateways' stores on one database: a SQLite file, or a PostgreSQL database. */
const backends = twoInstanceBackends<TransferStore>({
  sqlite: (core) => new SqliteTransferStore(core),
  postgres: (database) => new PgTransferStore(database),
  truncate: ['transfers'],
});
let t: TwoInstances<TransferStore>;
const storeA = () => t.a;
const storeB = () => t.b;

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

describe.each(backends)('TransferRegistry on $name', (backend) => {
  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    t = await backend.open();
  });
  afterEach(() => backend.close());

  test('reports progress with a rate while running, then the result', async () => {
    let now = 1_000_000;
    const registry = new TransferRegistry(storeA(), () => now);
    const t = controllable();
    const id = await registry.start('acct', t.run);
    expect(await registry.status('acct', id)).toMatchObject({ state: 'running', bytes_done: 0, bytes_total: null });
    t.progress().bytesTotal = 10_000_000;
    t.progress().filesTotal = 1;
    now += 1000;
    t.progress().bytesDone = 4_000_000;
    t.tick();
    expect(await registry.status('acct', id)).toMatchObject({
      bytes_done: 4_000_000,
      bytes_total: 10_000_000,
      rate_bytes_per_s: 4_000_000,
    });
    now += 1000;
    t.progress().bytesDone = 10_000_000;
    t.progress().filesDone = 1;
    t.finish({ bytes: 10_000_000, files: 1, sha256: 'f'.repeat(64), skipped: [] });
    await new Promise((r) => setImmediate(r));
    expect(await registry.status('acct', id)).toMatchObject({
      state: 'done',
      files_done: 1,
      rate_bytes_per_s: 5_000_000,
      result: { bytes: 10_000_000, duration_ms: 2000 },
    });
  });

  test('a failure keeps its code; another account and unknown ids see nothing', async () => {
    const registry = new TransferRegistry(storeA());
    const t = controllable();
    const id = await registry.start('acct', t.run);
    t.fail(new LetKiteError('machine_offline', 'gone'));
    await new Promise((r) => setImmediate(r));
    expect(await registry.status('acct', id)).toMatchObject({ state: 'failed', error: { code: 'machine_offline' } });
    expect(await registry.status('other', id)).toBeNull();
    expect(await registry.status('acct', 'tr_nope')).toBeNull();
  });

  test('another gateway reads the status from the store: progress while running, then the outcome', async () => {
    const a = new TransferRegistry(storeA());
    const b = new TransferRegistry(storeB());
    const t = controllable();
    const id = await a.start('acct', t.run);
    expect(await b.status('acct', id)).toMatchObject({ transfer_id: id, state: 'running', bytes_done: 0 });
    t.progress().bytesTotal = 300;
    t.progress().bytesDone = 100;
    await new Promise((r) => setTimeout(r, TRANSFER_WRITE_EVERY_MS + 300));
    await a.flush();
    expect(await b.status('acct', id)).toMatchObject({ state: 'running', bytes_done: 100, bytes_total: 300 });
    t.progress().bytesDone = 300;
    t.finish({ bytes: 300, files: 1, sha256: 'a'.repeat(64), skipped: [] });
    await new Promise((r) => setImmediate(r));
    await a.flush();
    expect(await b.status('acct', id)).toMatchObject({ state: 'done', bytes_done: 300, result: { bytes: 300 } });
    expect(await b.status('other', id)).toBeNull();
  });

  test('a running transfer whose gateway stopped writing reads as failed on the others', async () => {
    let now = Date.now();
    const a = new TransferRegistry(storeA());
    const b = new TransferRegistry(storeB(), () => now);
    const id = await a.start('acct', controllable().run);
    expect((await b.status('acct', id))?.state).toBe('running');
    now += TRANSFER_STALE_MS + 5000;
    expect(await b.status('acct', id)).toMatchObject({ state: 'failed', error: { code: 'internal' } });
    a.close();
  });
});
