import type Database from 'better-sqlite3';
import { auditRowHash, auditRowOf, type ChainedRow, GENESIS_HASH } from '../audit-chain';
import type { AuditEventInput } from '../types';

/**
 * The one audit insert (REVIEW §3 row 1): every store that writes an audit row calls `insertAudit` inside the
 * transaction of its change, so a change without its row cannot happen and a failed audit write fails the change.
 *
 * Each row is chained (per account): it stores the previous row's hash and SHA-256 over its own canonical
 * encoding, which includes that previous hash. The head of the chain lives in `audit_chains`; reading it and
 * moving it happen in the same write transaction as the insert, and SQLite has one writer at a time, so
 * concurrent inserts (other processes on the same file included) line up one after the other. A transaction
 * whose read snapshot went stale before its first write gets SQLITE_BUSY and fails as a whole: the chain never
 * forks (the unique index on (account_id, prev_hash) would refuse a fork too).
 */

export { auditRowHash, auditRowOf, type ChainedRow, GENESIS_HASH } from '../audit-chain';

/** The column list of `audit_events` as SQL aliases matching `ChainedRow` (plus `hash`). */
export const AUDIT_COLUMNS = `id, account_id AS accountId, at, actor, action, target, decision, outcome, details,
  user_id AS userId, tool, machine_id AS machineId, credential_id AS credentialId, client_name AS clientName,
  request_id AS requestId, duration_ms AS durationMs, prev_hash AS prevHash, hash`;

function prepare(db: Database.Database) {
  return {
    head: db.prepare<[string], { headId: number | null; headHash: string | null }>(
      'SELECT head_id AS headId, head_hash AS headHash FROM audit_chains WHERE account_id = ?',
    ),
    // AUTOINCREMENT: ids are never reused, also after pruning deleted the highest one.
    nextId: db.prepare<[], { id: number }>(
      `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit_events'), 0),
                  coalesce((SELECT max(id) FROM audit_events), 0)) + 1 AS id`,
    ),
    insert: db.prepare(
      `INSERT INTO audit_events (id, account_id, at, actor, action, target, decision, outcome, details, user_id, tool,
         machine_id, credential_id, client_name, request_id, duration_ms, prev_hash, hash)
       VALUES (@id, @accountId, @at, @actor, @action, @target, @decision, @outcome, @details, @userId, @tool,
         @machineId, @credentialId, @clientName, @requestId, @durationMs, @prevHash, @hash)`,
    ),
    setHead: db.prepare(
      `INSERT INTO audit_chains (account_id, head_id, head_hash) VALUES (?, ?, ?)
       ON CONFLICT(account_id) DO UPDATE SET head_id = excluded.head_id, head_hash = excluded.head_hash`,
    ),
  };
}

const prepared = new WeakMap<Database.Database, ReturnType<typeof prepare>>();

function statementsOf(db: Database.Database): ReturnType<typeof prepare> {
  let s = prepared.get(db);
  if (s === undefined) {
    s = prepare(db);
    prepared.set(db, s);
  }
  return s;
}

/**
 * Writes one chained audit row. Call it inside the write transaction of the change it records (or use
 * `appendAuditRow`); returns the row's id.
 */
export function insertAudit(db: Database.Database, e: AuditEventInput): number {
  // Outside a transaction the read of the head and the insert must still be one unit.
  if (!db.inTransaction) return db.transaction(() => insertAudit(db, e)).immediate();
  const s = statementsOf(db);
  const row = auditRowOf(e);
  const prevHash = s.head.get(row.accountId)?.headHash ?? GENESIS_HASH;
  const id = s.nextId.get()?.id ?? 1;
  const chained: ChainedRow = { ...row, id, prevHash };
  const hash = auditRowHash(chained);
  s.insert.run({ ...chained, hash });
  s.setHead.run(row.accountId, id, hash);
  return id;
}

/**
 * An audit row on its own (a tool call, a sign-in): its own IMMEDIATE transaction, which takes the write lock
 * before the head is read, so another process's insert is waited for (busy_timeout) instead of failing.
 */
export function appendAuditRow(db: Database.Database, e: AuditEventInput): number {
  return insertAudit(db, e);
}

/**
 * The better-sqlite3 handle under a drizzle database or transaction, for `insertAudit` from a drizzle
 * transaction callback (the same connection, so the same transaction). Throws rather than write elsewhere.
 */
export function sqliteClientOf(db: unknown): Database.Database {
  const client = (db as { session?: { client?: unknown } }).session?.client;
  if (
    client === null ||
    typeof client !== 'object' ||
    typeof (client as { prepare?: unknown }).prepare !== 'function'
  ) {
    throw new Error('audit insert: not a better-sqlite3 drizzle handle');
  }
  return client as Database.Database;
}
