import type Database from 'better-sqlite3';
import type { AuditEvent, AuditEventInput, AuditQuery, AuditVerification } from '../types';
import { AUDIT_COLUMNS, auditRowHash, type ChainedRow, GENESIS_HASH, insertAudit } from './audit';

/**
 * Reading, verifying and pruning the activity log on SQLite. The insert is `audit.ts`; these are the rest of the
 * hash chain's life: seal rows written before the chain existed, walk it, and cut its tail end off with an anchor.
 */

type StoredRow = Omit<ChainedRow, 'prevHash'> & { prevHash: string | null; hash: string | null };

function toEvent(r: StoredRow): AuditEvent {
  let details: Record<string, unknown>;
  try {
    details = JSON.parse(r.details) as Record<string, unknown>;
  } catch {
    // A row edited into invalid JSON still lists (verify names it); the raw text stays visible.
    details = { unparseable: r.details };
  }
  return { ...r, details };
}

/** The rows matching a query, newest first (or oldest first with `ascending`), at most `limit`. */
export function listAuditRows(db: Database.Database, accountId: string, q: AuditQuery): AuditEvent[] {
  const where: string[] = ['account_id = @accountId'];
  const params: Record<string, unknown> = { accountId, limit: q.limit };
  const eq = (column: string, name: string, value: unknown) => {
    if (value === undefined) return;
    where.push(`${column} = @${name}`);
    params[name] = value;
  };
  if (q.beforeId !== undefined) {
    where.push('id < @beforeId');
    params.beforeId = q.beforeId;
  }
  if (q.afterId !== undefined) {
    where.push('id > @afterId');
    params.afterId = q.afterId;
  }
  if (q.since !== undefined) {
    where.push('at >= @since');
    params.since = q.since;
  }
  if (q.until !== undefined) {
    where.push('at < @until');
    params.until = q.until;
  }
  // `tool.` … `tool/` is the range of `tool.<name>` actions (index-friendly, unlike LIKE); a takeover notice names
  // a tool too but is no call.
  if (q.toolCalls) where.push("action >= 'tool.' AND action < 'tool/'");
  eq('action', 'action', q.action);
  eq('user_id', 'userId', q.userId);
  eq('credential_id', 'credentialId', q.credentialId);
  eq('machine_id', 'machineId', q.machineId);
  eq('tool', 'tool', q.tool);
  if (q.outcome === 'error') where.push("outcome IS NOT NULL AND outcome NOT IN ('ok', 'approval_pending')");
  else eq('outcome', 'outcome', q.outcome);
  const order = q.ascending ? 'ASC' : 'DESC';
  const rows = db
    .prepare(`SELECT ${AUDIT_COLUMNS} FROM audit_events WHERE ${where.join(' AND ')} ORDER BY id ${order} LIMIT @limit`)
    .all(params) as StoredRow[];
  return rows.map(toEvent);
}

interface ChainState {
  headId: number | null;
  headHash: string | null;
  anchorId: number | null;
  anchorHash: string | null;
  retentionDays: number | null;
}

function chainState(db: Database.Database, accountId: string): ChainState | undefined {
  return db
    .prepare(
      `SELECT head_id AS headId, head_hash AS headHash, anchor_id AS anchorId, anchor_hash AS anchorHash,
              retention_days AS retentionDays FROM audit_chains WHERE account_id = ?`,
    )
    .get(accountId) as ChainState | undefined;
}

/**
 * Walks the account's chain from its anchor (or the start) to its head, recomputing every hash. The first
 * problem is reported with the row where it shows: a changed row (its hash no longer matches its columns), a row
 * whose predecessor is not the row before it (one was deleted, inserted or changed along with its hash), or a
 * head that is not the last row (rows at the end were deleted or added).
 */
export function verifyAuditChain(db: Database.Database, accountId: string): AuditVerification {
  // One read transaction: a concurrent append cannot make a whole chain look broken half way through.
  return db
    .transaction((): AuditVerification => {
      const state = chainState(db, accountId);
      const anchorId = state?.anchorId ?? null;
      let expectedPrev = state?.anchorHash ?? GENESIS_HASH;
      let lastId: number | null = anchorId;
      let rows = 0;
      const iterate = db
        .prepare(`SELECT ${AUDIT_COLUMNS} FROM audit_events WHERE account_id = ? AND id > ? ORDER BY id ASC`)
        .iterate(accountId, anchorId ?? 0) as IterableIterator<StoredRow>;
      for (const r of iterate) {
        rows++;
        if (r.hash === null || r.prevHash === null) {
          return { ok: false, rows, brokenId: r.id, reason: 'unsealed', message: `row ${r.id} carries no hash` };
        }
        if (auditRowHash({ ...r, prevHash: r.prevHash }) !== r.hash) {
          return {
            ok: false,
            rows,
            brokenId: r.id,
            reason: 'row_changed',
            message: `row ${r.id} (${r.action} at ${r.at}) was changed after it was written: its hash does not match its contents`,
          };
        }
        if (r.prevHash !== expectedPrev) {
          const after = lastId === null ? 'the start of the log' : `row ${lastId}`;
          return {
            ok: false,
            rows,
            brokenId: r.id,
            reason: 'chain_broken',
            message: `row ${r.id} does not follow ${after}: a row between them was deleted, inserted or rewritten`,
          };
        }
        expectedPrev = r.hash;
        lastId = r.id;
      }
      const headId = state?.headId ?? null;
      if (headId !== lastId || (headId !== null && state?.headHash !== expectedPrev)) {
        const brokenId = headId ?? lastId ?? 0;
        return {
          ok: false,
          rows,
          brokenId,
          reason: 'head_mismatch',
          message:
            headId !== null && (lastId === null || headId > lastId)
              ? `the log ends at ${lastId === null ? 'its start' : `row ${lastId}`} but its last written row is ${headId}: rows at the end were deleted`
              : `the chain's recorded head (row ${headId ?? 'none'}) is not its last row (${lastId ?? 'none'})`,
        };
      }
      return { ok: true, rows, headId, anchorId };
    })
    .deferred();
}

/**
 * Deletes the account's oldest rows written before `before` — a prefix of the chain, so the rest still links —
 * and records the last deleted row's id and hash as the anchor verification starts from. The prune's own audit
 * row is written in the same transaction.
 */
export function pruneAuditRows(
  db: Database.Database,
  accountId: string,
  before: string,
  audit: AuditEventInput,
): { pruned: number } {
  return db
    .transaction(() => {
      const state = chainState(db, accountId);
      const from = state?.anchorId ?? 0;
      // The first row to keep: everything before it goes (a row with an earlier time after it stays, so the cut
      // is a clean prefix even when two gateways' clocks differ a little).
      const keep = db
        .prepare('SELECT min(id) AS id FROM audit_events WHERE account_id = ? AND id > ? AND at >= ?')
        .get(accountId, from, before) as { id: number | null };
      const last = db
        .prepare(
          `SELECT id, hash FROM audit_events WHERE account_id = ? AND id > ? ${keep.id === null ? '' : 'AND id < ?'}
           ORDER BY id DESC LIMIT 1`,
        )
        .get(...(keep.id === null ? [accountId, from] : [accountId, from, keep.id])) as
        | { id: number; hash: string | null }
        | undefined;
      let pruned = 0;
      if (last !== undefined) {
        if (last.hash === null) throw new Error(`audit row ${last.id} is not sealed; refusing to prune`);
        pruned = db
          .prepare('DELETE FROM audit_events WHERE account_id = ? AND id <= ?')
          .run(accountId, last.id).changes;
        db.prepare('UPDATE audit_chains SET anchor_id = ?, anchor_hash = ? WHERE account_id = ?').run(
          last.id,
          last.hash,
          accountId,
        );
      }
      insertAudit(db, { ...audit, details: { ...audit.details, pruned, before } });
      return { pruned };
    })
    .immediate();
}

/** The account's retention in days, or null (kept for ever). */
export function auditRetention(db: Database.Database, accountId: string): number | null {
  return chainState(db, accountId)?.retentionDays ?? null;
}

/** Sets the retention and writes its audit row in the same transaction. */
export function setAuditRetentionDays(
  db: Database.Database,
  accountId: string,
  days: number | null,
  audit: AuditEventInput,
): void {
  db.transaction(() => {
    db.prepare(
      `INSERT INTO audit_chains (account_id, retention_days) VALUES (?, ?)
       ON CONFLICT(account_id) DO UPDATE SET retention_days = excluded.retention_days`,
    ).run(accountId, days);
    insertAudit(db, audit);
  }).immediate();
}

/**
 * Chains rows written before the chain existed (a database from an older version), oldest first, in one
 * transaction; a no-op once every row is sealed. Runs when the store opens.
 */
export function sealUnchainedRows(db: Database.Database): number {
  const pending = db.prepare('SELECT count(*) AS n FROM audit_events WHERE hash IS NULL').get() as { n: number };
  if (pending.n === 0) return 0;
  return db
    .transaction(() => {
      const rows = db
        .prepare(`SELECT ${AUDIT_COLUMNS} FROM audit_events WHERE hash IS NULL ORDER BY id ASC`)
        .all() as StoredRow[];
      const heads = new Map<string, string>();
      const headOf = db.prepare('SELECT head_hash AS h FROM audit_chains WHERE account_id = ?');
      const seal = db.prepare('UPDATE audit_events SET prev_hash = ?, hash = ? WHERE id = ?');
      const setHead = db.prepare(
        `INSERT INTO audit_chains (account_id, head_id, head_hash) VALUES (?, ?, ?)
         ON CONFLICT(account_id) DO UPDATE SET head_id = excluded.head_id, head_hash = excluded.head_hash`,
      );
      for (const r of rows) {
        const prevHash =
          heads.get(r.accountId) ?? (headOf.get(r.accountId) as { h: string | null } | undefined)?.h ?? GENESIS_HASH;
        const hash = auditRowHash({ ...r, prevHash });
        seal.run(prevHash, hash, r.id);
        setHead.run(r.accountId, r.id, hash);
        heads.set(r.accountId, hash);
      }
      return rows.length;
    })
    .immediate();
}

interface TakeoverClaims {
  insert: Database.Statement;
  /**
   * (credential, machine) pairs this process has seen claimed (by it or another gateway). A notice row is never
   * deleted, so a pair once claimed stays claimed: later calls on it answer false without a write transaction
   * (the claim runs after every exec, write_file …). Only a cache of "already claimed": a pair not in it still
   * goes to the database, which decides.
   */
  claimed: Set<string>;
}

const takeoverClaims = new WeakMap<Database.Database, TakeoverClaims>();
/** Past this many pairs the cache starts over (the database still answers correctly, one write each). */
const CLAIMED_CACHE_MAX = 100_000;

function takeoverClaimsOf(db: Database.Database): TakeoverClaims {
  let c = takeoverClaims.get(db);
  if (c === undefined) {
    c = {
      insert: db.prepare(
        `INSERT INTO takeover_notices (account_id, credential_id, machine_id, user_id, tool, at)
         VALUES (@accountId, @credentialId, @machineId, @userId, @tool, @at) ON CONFLICT DO NOTHING`,
      ),
      claimed: new Set(),
    };
    takeoverClaims.set(db, c);
  }
  return c;
}

/** Inserts the (credential, machine) pair once, with its audit row; true only for the insert that counted. */
export function claimTakeover(
  db: Database.Database,
  n: { accountId: string; credentialId: string; machineId: string; userId: string; tool: string; at: string },
  audit: AuditEventInput,
): boolean {
  const claims = takeoverClaimsOf(db);
  const key = `${n.credentialId}\0${n.machineId}`;
  if (claims.claimed.has(key)) return false;
  const won = db
    .transaction(() => {
      const inserted = claims.insert.run(n).changes === 1;
      if (inserted) insertAudit(db, audit);
      return inserted;
    })
    .immediate();
  // Only once the transaction committed: a failed audit insert rolled the claim back, so it stays unclaimed.
  if (claims.claimed.size >= CLAIMED_CACHE_MAX) claims.claimed.clear();
  claims.claimed.add(key);
  return won;
}
