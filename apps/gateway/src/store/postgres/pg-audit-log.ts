import { and, asc, desc, eq, gt, gte, lt, lte, notInArray, type SQL, sql } from 'drizzle-orm';
import { auditRowHash, GENESIS_HASH } from '../audit-chain';
import type { AuditEvent, AuditEventInput, AuditQuery, AuditVerification } from '../types';
import { insertAudit } from './pg-audit';
import type { PgDatabase, PgDb, PgTx } from './pg-database';
import { auditChains, auditEvents, takeoverNotices } from './schema';

/**
 * Reading, verifying and pruning the activity log on PostgreSQL: the twin of store/sqlite/sqlite-audit-log.ts.
 * The insert is pg-audit.ts. Every change that moves the chain (append, prune) first locks the account's
 * `audit_chains` row, so on READ COMMITTED they line up one after the other across gateways.
 */

type StoredRow = typeof auditEvents.$inferSelect;

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

/** The WHERE of a query: the same conditions as SQLite's, so the same (account_id, <column>, id) indexes serve. */
function auditConditions(accountId: string, q: AuditQuery): SQL[] {
  const where: SQL[] = [eq(auditEvents.accountId, accountId)];
  if (q.beforeId !== undefined) where.push(lt(auditEvents.id, q.beforeId));
  if (q.afterId !== undefined) where.push(gt(auditEvents.id, q.afterId));
  if (q.since !== undefined) where.push(gte(auditEvents.at, q.since));
  if (q.until !== undefined) where.push(lt(auditEvents.at, q.until));
  // SQLite's `tool.` … `tool/` range depends on byte order; a database with a linguistic collation orders
  // punctuation differently, so the prefix is compared as bytes here (equality is collation-proof).
  if (q.toolCalls) where.push(sql`left(${auditEvents.action}, 5) = 'tool.'`);
  if (q.action !== undefined) where.push(eq(auditEvents.action, q.action));
  if (q.userId !== undefined) where.push(eq(auditEvents.userId, q.userId));
  if (q.credentialId !== undefined) where.push(eq(auditEvents.credentialId, q.credentialId));
  if (q.machineId !== undefined) where.push(eq(auditEvents.machineId, q.machineId));
  if (q.tool !== undefined) where.push(eq(auditEvents.tool, q.tool));
  if (q.outcome === 'error') {
    // NOT IN excludes NULL (no outcome) as SQLite's `IS NOT NULL AND NOT IN` does.
    where.push(notInArray(auditEvents.outcome, ['ok', 'approval_pending']));
  } else if (q.outcome !== undefined) where.push(eq(auditEvents.outcome, q.outcome));
  return where;
}

/** The statement of a query (exported so a test can EXPLAIN exactly what runs). */
export function auditListQuery(db: PgDb, accountId: string, q: AuditQuery) {
  return db
    .select()
    .from(auditEvents)
    .where(and(...auditConditions(accountId, q)))
    .orderBy(q.ascending ? asc(auditEvents.id) : desc(auditEvents.id))
    .limit(q.limit);
}

/** The rows matching a query, newest first (or oldest first with `ascending`), at most `limit`. */
export async function listAuditRows(db: PgDb, accountId: string, q: AuditQuery): Promise<AuditEvent[]> {
  return (await auditListQuery(db, accountId, q)).map(toEvent);
}

/** Rows read per round trip while verifying (a chain of millions is walked without holding it in memory). */
const VERIFY_BATCH = 2000;

/**
 * Walks the account's chain from its anchor (or the start) to its head, recomputing every hash; the same checks
 * and messages as SQLite's `verifyAuditChain`. One REPEATABLE READ transaction: every batch and the head read
 * see one snapshot, so an append meanwhile cannot make a whole chain look broken.
 */
export function verifyAuditChain(database: PgDatabase, accountId: string): Promise<AuditVerification> {
  return database.transaction(
    async (tx): Promise<AuditVerification> => {
      const [state] = await tx.select().from(auditChains).where(eq(auditChains.accountId, accountId));
      const anchorId = state?.anchorId ?? null;
      let expectedPrev = state?.anchorHash ?? GENESIS_HASH;
      let lastId: number | null = anchorId;
      let rows = 0;
      for (let from = anchorId ?? 0; ; ) {
        const batch = await tx
          .select()
          .from(auditEvents)
          .where(and(eq(auditEvents.accountId, accountId), gt(auditEvents.id, from)))
          .orderBy(asc(auditEvents.id))
          .limit(VERIFY_BATCH);
        for (const r of batch) {
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
        if (batch.length < VERIFY_BATCH) break;
        from = lastId ?? from;
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
    },
    { isolationLevel: 'repeatable read' },
  );
}

/**
 * Locks the account's chain row (created if missing) for the rest of the transaction: appends and prunes of the
 * account wait for it, and each later statement (READ COMMITTED: a fresh snapshot each) sees every row committed
 * before the lock was granted. Returns the chain's state.
 */
async function lockChain(tx: PgTx, accountId: string): Promise<typeof auditChains.$inferSelect> {
  await tx.insert(auditChains).values({ accountId }).onConflictDoNothing();
  const [state] = await tx.select().from(auditChains).where(eq(auditChains.accountId, accountId)).for('update');
  if (!state) throw new Error(`audit chain of ${accountId} vanished`);
  return state;
}

/**
 * Deletes the account's oldest rows written before `before` — a prefix of the chain, so the rest still links —
 * and records the last deleted row's id and hash as the anchor verification starts from; the prune's own audit
 * row in the same transaction. The chain row is locked first, so no append slips in between the cut and the anchor.
 */
export function pruneAuditRows(
  database: PgDatabase,
  accountId: string,
  before: string,
  audit: AuditEventInput,
): Promise<{ pruned: number }> {
  return database.transaction(async (tx) => {
    const state = await lockChain(tx, accountId);
    const from = state.anchorId ?? 0;
    // The first row to keep: everything before it goes (a row with an earlier time after it stays, so the cut is
    // a clean prefix even when two gateways' clocks differ a little).
    const [keep] = await tx
      .select({ id: sql<string | null>`min(${auditEvents.id})` })
      .from(auditEvents)
      .where(and(eq(auditEvents.accountId, accountId), gt(auditEvents.id, from), gte(auditEvents.at, before)));
    const keepId = keep?.id === null || keep?.id === undefined ? null : Number(keep.id);
    const [last] = await tx
      .select({ id: auditEvents.id, hash: auditEvents.hash })
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.accountId, accountId),
          gt(auditEvents.id, from),
          keepId === null ? undefined : lt(auditEvents.id, keepId),
        ),
      )
      .orderBy(desc(auditEvents.id))
      .limit(1);
    let pruned = 0;
    if (last !== undefined) {
      if (last.hash === null) throw new Error(`audit row ${last.id} is not sealed; refusing to prune`);
      const deleted = await tx
        .delete(auditEvents)
        .where(and(eq(auditEvents.accountId, accountId), lte(auditEvents.id, last.id)));
      pruned = deleted.rowCount ?? 0;
      await tx
        .update(auditChains)
        .set({ anchorId: last.id, anchorHash: last.hash })
        .where(eq(auditChains.accountId, accountId));
    }
    await insertAudit(tx, { ...audit, details: { ...audit.details, pruned, before } });
    return { pruned };
  });
}

/** The account's retention in days, or null (kept for ever). */
export async function auditRetention(db: PgDb, accountId: string): Promise<number | null> {
  const [row] = await db
    .select({ days: auditChains.retentionDays })
    .from(auditChains)
    .where(eq(auditChains.accountId, accountId));
  return row?.days ?? null;
}

/** Sets the retention and writes its audit row in the same transaction. */
export function setAuditRetentionDays(
  database: PgDatabase,
  accountId: string,
  days: number | null,
  audit: AuditEventInput,
): Promise<void> {
  return database.transaction(async (tx) => {
    await tx
      .insert(auditChains)
      .values({ accountId, retentionDays: days })
      .onConflictDoUpdate({ target: auditChains.accountId, set: { retentionDays: days } });
    await insertAudit(tx, audit);
  });
}

/**
 * Inserts the (credential, machine) pair once, with its audit row; true only for the insert that counted. Of two
 * racing first calls the second's insert waits for the first's commit and then does nothing.
 */
export function claimTakeover(
  database: PgDatabase,
  n: { accountId: string; credentialId: string; machineId: string; userId: string; tool: string; at: string },
  audit: AuditEventInput,
): Promise<boolean> {
  return database.transaction(async (tx) => {
    const won = await tx
      .insert(takeoverNotices)
      .values(n)
      .onConflictDoNothing()
      .returning({ machineId: takeoverNotices.machineId });
    if (won.length !== 1) return false;
    await insertAudit(tx, audit);
    return true;
  });
}
