import { LetKiteError } from '@letkite/protocol';
import { and, asc, desc, eq, gt, inArray, isNull, lte, sql } from 'drizzle-orm';
import type {
  ApprovalBinding,
  ApprovalRequest,
  ApprovalStatus,
  ApprovalStore,
  GateOutcome,
  PushSubscriptionRecord,
} from '../../approvals/approval-store';
import {
  approvalFromRow,
  approvalToRow,
  decisionAudit,
  decisionToRow,
  expireAudit,
  pushSubscriptionFromRow,
  requestAudit,
  sameBinding,
  useAudit,
} from '../approval-rows';
import type { AuditEventInput } from '../types';
import {
  approvalChallenges,
  approvalGateLocks,
  approvalRequests,
  pushSubscriptions,
  pushVapidKeys,
} from './approvals-schema';
import { insertAudit } from './pg-audit';
import type { PgDatabase, PgDb, PgTx } from './pg-database';

/**
 * The approvals domain on PostgreSQL (cluster mode), the twin of store/sqlite/sqlite-approval-store.ts. Every
 * decision holds under READ COMMITTED with any number of gateways (docs/design/store-domains.md): `gate` writes the
 * credential's lock row first, expiry locks the due rows (`FOR UPDATE`, which re-checks them after a concurrent
 * change) before it writes them, decisions are conditional writes whose affected rows count, and the partial unique
 * index `approval_requests_one_pending` refuses a second pending request for one binding.
 */
export class PgApprovalStore implements ApprovalStore {
  private readonly db: PgDb;
  private readonly getById;

  constructor(private readonly database: PgDatabase) {
    this.db = database.db;
    // The approval page and every wake-up read a request by id: prepared once per connection.
    this.getById = this.db
      .select()
      .from(approvalRequests)
      .where(eq(approvalRequests.id, sql.placeholder('id')))
      .prepare('approval_by_id');
  }

  /** Expires what is due (only `binding`'s requests when given) and returns what this call expired. */
  private async expireIn(tx: PgTx, now: string, binding?: ApprovalBinding): Promise<ApprovalRequest[]> {
    // The decision is the row lock: FOR UPDATE waits for a sweeper (or gate, or decision) holding a due row and
    // then re-checks the WHERE on the row as committed, so a row expired, decided or used meanwhile drops out and
    // each request is expired, audited and announced exactly once. Id order keeps two sweepers from deadlocking.
    const due = await tx
      .select()
      .from(approvalRequests)
      .where(
        and(
          inArray(approvalRequests.status, ['pending', 'approved']),
          lte(approvalRequests.expiresAt, now),
          binding ? sameBinding(approvalRequests, binding) : undefined,
        ),
      )
      .orderBy(asc(approvalRequests.id))
      .for('update');
    if (due.length === 0) return [];
    await tx
      .update(approvalRequests)
      .set({ status: 'expired' })
      .where(
        inArray(
          approvalRequests.id,
          due.map((r) => r.id),
        ),
      );
    for (const r of due) {
      await insertAudit(tx, expireAudit(approvalFromRow(r), now));
    }
    return due.map((r) => ({ ...approvalFromRow(r), status: 'expired' as const }));
  }

  async gate(
    binding: ApprovalBinding,
    candidate: ApprovalRequest,
    maxPending: number,
    now: string,
  ): Promise<GateOutcome> {
    return this.database.transaction(async (tx): Promise<GateOutcome> => {
      // First a write on the credential's lock row: PostgreSQL holds its lock to commit, so this credential's
      // gates run one after the other on every gateway, and each later statement (a fresh READ COMMITTED
      // snapshot) sees the requests the previous gate committed: the pending count below is current.
      await tx
        .insert(approvalGateLocks)
        .values({ credentialId: binding.credentialId, gates: 1 })
        .onConflictDoUpdate({
          target: approvalGateLocks.credentialId,
          set: { gates: sql`${approvalGateLocks.gates} + 1` },
        });
      // Only this binding's due requests expire here (it is about to ask again, so nobody else needs telling);
      // the rest are expired by expireDue, which announces them.
      await this.expireIn(tx, now, binding);
      const same = (
        await tx
          .select()
          .from(approvalRequests)
          .where(sameBinding(approvalRequests, binding))
          .orderBy(desc(approvalRequests.createdAt))
      ).map(approvalFromRow);
      const denied = same.find((r) => r.status === 'denied');
      if (denied) return { kind: 'denied', request: denied };
      const approved = same.find((r) => r.status === 'approved');
      if (approved) {
        // Conditional: a sweep that expired it since the read above leaves nothing to use.
        const used = await tx
          .update(approvalRequests)
          .set({ status: 'used', usedAt: now })
          .where(and(eq(approvalRequests.id, approved.id), eq(approvalRequests.status, 'approved')))
          .returning({ id: approvalRequests.id });
        if (used.length === 1) {
          await insertAudit(tx, useAudit(approved, now));
          return { kind: 'consumed', request: { ...approved, status: 'used', usedAt: now } };
        }
      }
      const pending = same.find((r) => r.status === 'pending');
      if (pending) return { kind: 'pending', request: pending, created: false, previous: null };
      const [open] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(approvalRequests)
        .where(
          and(
            eq(approvalRequests.credentialId, binding.credentialId),
            eq(approvalRequests.status, 'pending'),
            gt(approvalRequests.expiresAt, now),
          ),
        );
      const openCount = open?.n ?? 0;
      if (openCount >= maxPending) return { kind: 'too_many', pending: openCount };
      // The partial unique index (one pending request per binding) decides a duplicate, not the read above.
      const inserted = await tx
        .insert(approvalRequests)
        .values(approvalToRow(candidate))
        .onConflictDoNothing()
        .returning({ id: approvalRequests.id });
      if (inserted.length !== 1) {
        const [winner] = await tx
          .select()
          .from(approvalRequests)
          .where(and(sameBinding(approvalRequests, binding), eq(approvalRequests.status, 'pending')));
        if (!winner) throw new LetKiteError('internal', 'an approval request could not be stored');
        return { kind: 'pending', request: approvalFromRow(winner), created: false, previous: null };
      }
      await insertAudit(tx, requestAudit(candidate, now));
      const previous = same.find((r) => r.status === 'used' || r.status === 'expired') ?? null;
      return { kind: 'pending', request: candidate, created: true, previous };
    });
  }

  async get(id: string): Promise<ApprovalRequest | null> {
    const [r] = await this.getById.execute({ id });
    return r ? approvalFromRow(r) : null;
  }

  async list(accountId: string, options: { status?: ApprovalStatus; limit: number }): Promise<ApprovalRequest[]> {
    const where =
      options.status === undefined
        ? eq(approvalRequests.accountId, accountId)
        : and(eq(approvalRequests.accountId, accountId), eq(approvalRequests.status, options.status));
    const rows = await this.db
      .select()
      .from(approvalRequests)
      .where(where)
      .orderBy(desc(approvalRequests.createdAt))
      .limit(options.limit);
    return rows.map(approvalFromRow);
  }

  async decide(
    id: string,
    decision: {
      status: 'approved' | 'denied';
      by: string;
      with: 'passkey' | 'totp' | 'session';
      at: string;
      assertion?: string | null;
    },
    auditEvent: AuditEventInput,
  ): Promise<ApprovalRequest | null> {
    return this.database.transaction(async (tx) => {
      // No sweep here: the guard below refuses an expired request, and expireDue announces its expiry. Of two
      // approvers deciding at once the second waits on the row and then matches `status = 'pending'` no longer.
      const [r] = await tx
        .update(approvalRequests)
        .set(decisionToRow(decision))
        .where(
          and(
            eq(approvalRequests.id, id),
            eq(approvalRequests.status, 'pending'),
            gt(approvalRequests.expiresAt, decision.at),
          ),
        )
        .returning();
      if (!r) return null;
      await insertAudit(tx, decisionAudit(approvalFromRow(r), auditEvent));
      return approvalFromRow(r);
    });
  }

  async expireDue(now: string): Promise<ApprovalRequest[]> {
    return this.database.transaction((tx) => this.expireIn(tx, now));
  }

  async putChallenge(c: {
    challenge: string;
    approvalId: string;
    userId: string;
    createdAt: string;
    expiresAt: string;
  }): Promise<void> {
    // A bound challenge (the hash of an approval's binding) is the same each time the person asks: renew it, but
    // never one bound to another approval or person.
    await this.db
      .insert(approvalChallenges)
      .values(c)
      .onConflictDoUpdate({
        target: approvalChallenges.challenge,
        set: { createdAt: c.createdAt, expiresAt: c.expiresAt, usedAt: null },
        setWhere: and(eq(approvalChallenges.approvalId, c.approvalId), eq(approvalChallenges.userId, c.userId)),
      });
  }

  async takeChallenge(challenge: string, approvalId: string, userId: string, now: string): Promise<boolean> {
    // Single use: of two takes at once the second re-checks `used_at IS NULL` after the first commits.
    const used = await this.db
      .update(approvalChallenges)
      .set({ usedAt: now })
      .where(
        and(
          eq(approvalChallenges.challenge, challenge),
          eq(approvalChallenges.approvalId, approvalId),
          eq(approvalChallenges.userId, userId),
          isNull(approvalChallenges.usedAt),
          gt(approvalChallenges.expiresAt, now),
        ),
      )
      .returning({ challenge: approvalChallenges.challenge });
    return used.length === 1;
  }

  async savePushSubscription(
    sub: PushSubscriptionRecord,
    auditEvent: AuditEventInput,
  ): Promise<PushSubscriptionRecord> {
    return this.database.transaction(async (tx) => {
      // An endpoint belongs to one browser profile: re-subscribing (maybe as someone else) replaces the old row.
      // One upsert on the endpoint's unique index, so two saves at once do not both miss the row and collide.
      await tx
        .insert(pushSubscriptions)
        .values(sub)
        .onConflictDoUpdate({
          target: pushSubscriptions.endpoint,
          set: {
            id: sub.id,
            accountId: sub.accountId,
            userId: sub.userId,
            p256dh: sub.p256dh,
            auth: sub.auth,
            userAgent: sub.userAgent,
            createdAt: sub.createdAt,
            lastSuccessAt: null,
            failures: 0,
          },
        });
      await insertAudit(tx, auditEvent);
      return sub;
    });
  }

  async deletePushSubscription(userId: string, endpoint: string, auditEvent: AuditEventInput): Promise<boolean> {
    return this.database.transaction(async (tx) => {
      const gone = await tx
        .delete(pushSubscriptions)
        .where(and(eq(pushSubscriptions.userId, userId), eq(pushSubscriptions.endpoint, endpoint)))
        .returning({ id: pushSubscriptions.id });
      if (gone.length === 0) return false;
      await insertAudit(tx, auditEvent);
      return true;
    });
  }

  async pushSubscriptionsOf(userIds: string[]): Promise<PushSubscriptionRecord[]> {
    if (userIds.length === 0) return [];
    const rows = await this.db.select().from(pushSubscriptions).where(inArray(pushSubscriptions.userId, userIds));
    return rows.map(pushSubscriptionFromRow);
  }

  async recordPushResult(id: string, result: 'ok' | 'failed' | 'gone', at: string): Promise<void> {
    if (result === 'gone') {
      await this.db.delete(pushSubscriptions).where(eq(pushSubscriptions.id, id));
      return;
    }
    // Counted in SQL: two gateways recording failures at once lose none.
    await this.db
      .update(pushSubscriptions)
      .set(result === 'ok' ? { lastSuccessAt: at, failures: 0 } : { failures: sql`${pushSubscriptions.failures} + 1` })
      .where(eq(pushSubscriptions.id, id));
  }

  async vapidKeys(
    create: () => { publicKey: string; privateKey: string },
    now: string,
  ): Promise<{ publicKey: string; privateKey: string }> {
    const read = async (): Promise<{ publicKey: string; privateKey: string } | null> => {
      const [r] = await this.db
        .select({ publicKey: pushVapidKeys.publicKey, privateKey: pushVapidKeys.privateKey })
        .from(pushVapidKeys)
        .where(eq(pushVapidKeys.id, 1));
      return r ?? null;
    };
    const existing = await read();
    if (existing) return existing;
    // Of two first starts at once, the primary key keeps one pair (the second insert waits for the first to
    // commit and then does nothing); both answer the stored one, read after the insert.
    await this.db
      .insert(pushVapidKeys)
      .values({ id: 1, ...create(), createdAt: now })
      .onConflictDoNothing();
    const kept = await read();
    if (!kept) throw new LetKiteError('internal', 'the VAPID key pair could not be stored');
    return kept;
  }
}
