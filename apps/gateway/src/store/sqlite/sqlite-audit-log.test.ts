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
// SQLite has: files written by an older gateway.
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
