import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { AuditEventInput } from '../types';
import { SqliteStore } from './sqlite-store';

let dir: string;
let file: string;
// The chain's contract (both dialects) is store/contract/audit-log.contract.test.ts; this file keeps what only
// SQLite has: files written by an older gateway, and the batched commit of standalone rows.
let store: SqliteStore;
let accountId: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'letkite-audit-'));
  file = join(dir, 'letkite.db');
  store = new SqliteStore(file);
  accountId = (await store.bootstrap('2026-01-01T00:00:00.000Z')).account.id;
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function event(i: number, extra: Partial<AuditEventInput> = {}): AuditEventInput {
  return {
    accountId,
    at: new Date(Date.UTC(2026, 0, 2, 0, i)).toISOString(),
    actor: 'connection:con_1',
    action: 'tool.exec',
    target: 'mch_a',
    decision: 'allow',
    outcome: 'ok',
    machineId: 'mch_a',
    userId: 'usr_1',
    clientName: 'claude-code',
    durationMs: 12.4,
    details: { arguments: { command: `echo ${i}` } },
    ...extra,
  };
}

/** A second connection to the file, as `sqlite3 letkite.db` would be: no triggers, no store. */
function raw<T>(fn: (db: Database.Database) => T): T {
  const db = new Database(file);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

test('rows written before the chain existed are sealed when the store opens', async () => {
  await store.appendAudit(event(1));
  await store.close();
  // What an older gateway's database looks like: rows without hashes and no chain head.
  raw((db) => {
    db.prepare('UPDATE audit_events SET prev_hash = NULL, hash = NULL').run();
    db.prepare('DELETE FROM audit_chains').run();
  });
  store = new SqliteStore(file);
  expect(await store.verifyAudit(accountId)).toMatchObject({ ok: true, rows: 2 });
  await store.appendAudit(event(2));
  expect(await store.verifyAudit(accountId)).toMatchObject({ ok: true, rows: 3 });
});

// Standalone audit rows are committed a batch per event-loop turn (audit-batch.ts). What that must never do: resolve
// an append before its row is committed (a tool call answers after the append resolves), let one bad row fail the
// others, fork the chain, or leave rows queued when the store closes.

const row = (n: number, action = 'tool.exec'): AuditEventInput => ({
  accountId,
  at: '2026-01-02T00:00:00.000Z',
  actor: 'token:tok_1',
  action,
  target: `call-${n}`,
  outcome: 'ok',
});

test('rows appended in one turn are committed together, in order, chained, and each is there when it resolves', async () => {
  const other = new Database(file, { readonly: true });
  try {
    const seenAtResolve: number[] = [];
    const appends = Array.from({ length: 25 }, (_, n) =>
      store.appendAudit(row(n)).then((id) => {
        // Read through another connection: only a committed row is visible there.
        const r = other.prepare('SELECT count(*) AS n FROM audit_events WHERE id = ?').get(id) as { n: number };
        seenAtResolve.push(r.n);
        return id;
      }),
    );
    const ids = await Promise.all(appends);
    expect(seenAtResolve).toEqual(Array(25).fill(1));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(25);
    const targets = other.prepare('SELECT target FROM audit_events WHERE action = ? ORDER BY id').all('tool.exec');
    expect(targets).toEqual(Array.from({ length: 25 }, (_, n) => ({ target: `call-${n}` })));
    expect(await store.verifyAudit(accountId)).toMatchObject({ ok: true, rows: 26 });
  } finally {
    other.close();
  }
});

test('a row that cannot be written fails its own append only; the rest of its batch is committed', async () => {
  store.sqlite.exec(`CREATE TRIGGER refuse_bad BEFORE INSERT ON audit_events WHEN NEW.action = 'tool.bad'
    BEGIN SELECT RAISE(ABORT, 'refused'); END`);
  const results = await Promise.allSettled([
    store.appendAudit(row(1)),
    store.appendAudit(row(2, 'tool.bad')),
    store.appendAudit(row(3)),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  const rows = await store.listAudit(accountId, { limit: 10, toolCalls: true, ascending: true });
  expect(rows.map((r) => r.target)).toEqual(['call-1', 'call-3']);
  expect(await store.verifyAudit(accountId)).toMatchObject({ ok: true });
});

test('rows still queued when the store closes are written before it closes', async () => {
  const pending = store.appendAudit(row(7));
  await store.close();
  const id = await pending;
  const reopened = new SqliteStore(file);
  try {
    expect((await reopened.listAudit(accountId, { limit: 1 }))[0]).toMatchObject({ id, target: 'call-7' });
  } finally {
    await reopened.close();
  }
  store = new SqliteStore(file);
});
