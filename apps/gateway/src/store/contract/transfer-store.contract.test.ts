import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { TransferStatus } from '../../transfers/transfer-registry';
import type { TransferRow, TransferStore } from '../../transfers/transfer-store';
import { PgTransferStore } from '../postgres/pg-transfer-store';
import { SqliteTransferStore } from '../sqlite/sqlite-transfer-store';
import { type TwoInstances, twoInstanceBackends } from './two-instance-backends';

const backends = twoInstanceBackends<TransferStore>({
  sqlite: (core) => new SqliteTransferStore(core),
  postgres: (database) => new PgTransferStore(database),
  truncate: ['transfers'],
});

const t0 = Date.parse('2026-12-01T10:00:00Z');
const at = (ms: number) => new Date(t0 + ms).toISOString();

function status(over: Record<string, unknown> = {}): TransferStatus {
  return { state: 'running', bytes_done: 0, bytes_total: null, files_done: 0, ...over } as unknown as TransferStatus;
}

function row(id: string, over: Partial<TransferRow> = {}): TransferRow {
  return {
    id,
    accountId: 'acc_1',
    state: 'running',
    status: status(),
    startedAt: at(0),
    updatedAt: at(0),
    endedAt: null,
    ...over,
  };
}

/** Two store instances on one database: the relaying gateway writes, any gateway answers `transfer_status`. */
describe.each(backends)('TransferStore on $name', (backend) => {
  let t: TwoInstances<TransferStore>;
  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    t = await backend.open();
  });
  afterEach(() => backend.close());

  test('a transfer written through one instance is read through the other, status and all', async () => {
    const { a, b } = t;
    await a.insert(row('tr_1'));
    expect(await b.get('acc_1', 'tr_1')).toEqual(row('tr_1'));
    await a.update('tr_1', {
      state: 'running',
      status: status({ bytes_done: 42 }),
      updatedAt: at(1000),
      endedAt: null,
    });
    expect(await b.get('acc_1', 'tr_1')).toMatchObject({ status: { bytes_done: 42 }, updatedAt: at(1000) });
    const done = status({ state: 'done', bytes_done: 100, result: { bytes: 100 } });
    await a.update('tr_1', { state: 'done', status: done, updatedAt: at(2000), endedAt: at(2000) });
    expect(await b.get('acc_1', 'tr_1')).toEqual({
      ...row('tr_1'),
      state: 'done',
      status: done,
      updatedAt: at(2000),
      endedAt: at(2000),
    });
  });

  test('another account and unknown ids see nothing', async () => {
    const { a, b } = t;
    await a.insert(row('tr_2'));
    expect(await b.get('acc_2', 'tr_2')).toBeNull();
    expect(await b.get('acc_1', 'tr_unknown')).toBeNull();
  });

  test('an id is recorded once', async () => {
    const { a, b } = t;
    await a.insert(row('tr_3'));
    await expect(b.insert(row('tr_3', { accountId: 'acc_2' }))).rejects.toThrow();
    expect(await a.get('acc_2', 'tr_3')).toBeNull();
  });

  test('prune deletes transfers ended, or no longer updated, before the cut-off only', async () => {
    const { a, b } = t;
    await a.insert(row('tr_ended', { state: 'done', endedAt: at(1000), updatedAt: at(1000) }));
    await a.insert(row('tr_stale', { updatedAt: at(2000) }));
    await a.insert(row('tr_running', { updatedAt: at(60_000) }));
    await a.insert(row('tr_recent_end', { state: 'failed', updatedAt: at(60_000), endedAt: at(60_000) }));
    expect(await b.prune(at(50_000))).toBe(2);
    expect(await a.get('acc_1', 'tr_ended')).toBeNull();
    expect(await a.get('acc_1', 'tr_stale')).toBeNull();
    expect(await a.get('acc_1', 'tr_running')).not.toBeNull();
    expect(await a.get('acc_1', 'tr_recent_end')).not.toBeNull();
  });
});
