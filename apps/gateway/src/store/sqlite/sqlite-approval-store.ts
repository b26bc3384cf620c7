import { LetKiteError } from '@letkite/protocol';
import { and, desc, eq, gt, inArray, isNull, lte, or, sql } from 'drizzle-orm';
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
import { insertAudit, sqliteClientOf } from './audit';
import { migrateSqliteDomain, type SqliteStore } from './sqlite-store';

type Row = typeof approvalRequests.$inferSelect;
type Tx = Parameters<Parameters<SqliteStore['db']['transaction']>[0]>[0];

/** The shared chained audit insert (store/sqlite/audit.ts), in the caller's transaction. */
function audit(tx: Tx, e: AuditEventInput): void {
  insertAudit(sqliteClientOf(tx), e);
}

/** The approvals domain on the shared SQLite database (its own migrations and migrations table). */
export class SqliteApprovalStore implements ApprovalStore {
  private readonly db: SqliteStore['db'];

  constructor(store: SqliteStore) {
    this.db = store.db;
    migrateSqliteDomain(store.db, 'sqlite-approvals', '__drizzle_migrations_approvals');
  }

  /** Expires what is due (only `binding`'s requests when given) and returns what this call expired. */
  private expireIn(tx: Tx, now: string, binding?: ApprovalBinding): ApprovalRequest[] {
    const due = tx
      .select()
      .from(approvalRequests)
      .where(
        and(
          or(eq(approvalRequests.status, 'pending'), eq(approvalRequests.status, 'approved')),
          lte(approvalRequests.expiresAt, now),
          binding ? sameBinding(approvalRequests, binding) : undefined,
        ),
      )
      .all();
    const expired: Row[] = [];
    for (const r of due) {
      // The decision is this conditional write: a row another sweeper (or gateway) expired, decided or used since
      // the read above matches no longer, so each request is expired, audited and notified exactly once.
      const changed = tx
        .update(approvalRequests)
        .set({ status: 'expired' })
        .where(
          and(
            eq(approvalRequests.id, r.id),
            eq(approvalRequests.status, r.status),
            lte(approvalRequests.expiresAt, now),
          ),
        )
        .run();
      if (changed.changes !== 1) continue;
      expired.push(r);
      audit(tx, expireAudit(approvalFromRow(r), now));
    }
    return expired.map((r) => ({ ...approvalFromRow(r), status: 'expired' as const }));
  }

  async gate(
    binding: ApprovalBinding,
    candidate: ApprovalRequest,
    maxPending: number,
    now: string,
  ): Promise<GateOutcome> {
    return this.db.transaction(
      (tx) => {
        // First a write on the credential's lock row: it serializes this credential's gates on PostgreSQL too
        // (SQLite's `immediate` already does), so the pending count read below is current for the limit.
        tx.insert(approvalGateLocks)
          .values({ credentialId: binding.credentialId, gates: 1 })
          .onConflictDoUpdate({
            target: approvalGateLocks.credentialId,
            set: { gates: sql`${approvalGateLocks.gates} + 1` },
          })
          .run();
        // Only this binding's due requests expire here (it is about to ask again, so nobody else needs telling);
        // the rest are expired by expireDue, which announces them.
        this.expireIn(tx, now, binding);
        const same = tx
          .select()
          .from(approvalRequests)
          .where(sameBinding(approvalRequests, binding))
          .orderBy(desc(approvalRequests.createdAt))
          .all()
          .map(approvalFromRow);
        const denied = same.find((r) => r.status === 'denied');
        if (denied) return { kind: 'denied', request: denied };
        const approved = same.find((r) => r.status === 'approved');
        if (approved) {
          const used = tx
            .update(approvalRequests)
            .set({ status: 'used', usedAt: now })
            .where(and(eq(approvalRequests.id, approved.id), eq(approvalRequests.status, 'approved')))
            .run();
          if (used.changes === 1) {
            audit(tx, useAudit(approved, now));
            return { kind: 'consumed', request: { ...approved, status: 'used', usedAt: now } };
          }
        }
        const pending = same.find((r) => r.status === 'pending');
        if (pending) return { kind: 'pending', request: pending, created: false, previous: null };
        const open = tx
          .select({ id: approvalRequests.id })
          .from(approvalRequests)
          .where(
            and(
              eq(approvalRequests.credentialId, binding.credentialId),
              eq(approvalRequests.status, 'pending'),
              gt(approvalRequests.expiresAt, now),
            ),
          )
          .all().length;
        if (open >= maxPending) return { kind: 'too_many', pending: open };
        // The partial unique index (one pending request per binding) decides a duplicate, not the read above.
        const inserted = tx.insert(approvalRequests).values(approvalToRow(candidate)).onConflictDoNothing().run();
        if (inserted.changes !== 1) {
          const winner = tx
            .select()
            .from(approvalRequests)
            .where(and(sameBinding(approvalRequests, binding), eq(approvalRequests.status, 'pending')))
            .get();
          if (!winner) throw new LetKiteError('internal', 'an approval request could not be stored');
          return { kind: 'pending', request: approvalFromRow(winner), created: false, previous: null };
        }
        audit(tx, requestAudit(candidate, now));
        const previous = same.find((r) => r.status === 'used' || r.status === 'expired') ?? null;
        return { kind: 'pending', request: candidate, created: true, previous };
      },
      { behavior: 'immediate' },
    );
  }

  async get(id: string): Promise<ApprovalRequest | null> {
    const r = this.db.select().from(approvalRequests).where(eq(approvalRequests.id, id)).get();
    return r ? approvalFromRow(r) : null;
  }

  async list(accountId: string, options: { status?: ApprovalStatus; limit: number }): Promise<ApprovalRequest[]> {
    const where =
      options.status === undefined
        ? eq(approvalRequests.accountId, accountId)
        : and(eq(approvalRequests.accountId, accountId), eq(approvalRequests.status, options.status));
    return this.db
      .select()
      .from(approvalRequests)
      .where(where)
      .orderBy(desc(approvalRequests.createdAt))
      .limit(options.limit)
      .all()
      .map(approvalFromRow);
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
    return this.db.transaction(
      (tx) => {
        // No sweep here: the guard below refuses an expired request, and expireDue announces its expiry.
        const changed = tx
          .update(approvalRequests)
          .set(decisionToRow(decision))
          .where(
            and(
              eq(approvalRequests.id, id),
              eq(approvalRequests.status, 'pending'),
              gt(approvalRequests.expiresAt, decision.at),
            ),
          )
          .run();
        if (changed.changes !== 1) return null;
        const r = tx.select().from(approvalRequests).where(eq(approvalRequests.id, id)).get();
        if (!r) return null;
        audit(tx, decisionAudit(approvalFromRow(r), auditEvent));
        return approvalFromRow(r);
      },
      { behavior: 'immediate' },
    );
  }

  async expireDue(now: string): Promise<ApprovalRequest[]> {
    return this.db.transaction((tx) => this.expireIn(tx, now), { behavior: 'immediate' });
  }

  async putChallenge(c: {
    challenge: string;
    approvalId: string;
    userId: string;
    createdAt: string;
    expiresAt: string;
  }): Promise<void> {
    // A bound challenge (the hash of an approval's binding) is the same each time the person asks: renew it.
    this.db
      .insert(approvalChallenges)
      .values(c)
      .onConflictDoUpdate({
        target: approvalChallenges.challenge,
        set: { createdAt: c.createdAt, expiresAt: c.expiresAt, usedAt: null },
        setWhere: and(eq(approvalChallenges.approvalId, c.approvalId), eq(approvalChallenges.userId, c.userId)),
      })
      .run();
  }

  async takeChallenge(challenge: string, approvalId: string, userId: string, now: string): Promise<boolean> {
    const used = this.db
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
      .run();
    return used.changes === 1;
  }

  async savePushSubscription(
    sub: PushSubscriptionRecord,
    auditEvent: AuditEventInput,
  ): Promise<PushSubscriptionRecord> {
    return this.db.transaction((tx) => {
      // An endpoint belongs to one browser profile: re-subscribing (maybe as someone else) replaces the old row.
      tx.delete(pushSubscriptions).where(eq(pushSubscriptions.endpoint, sub.endpoint)).run();
      tx.insert(pushSubscriptions).values(sub).run();
      audit(tx, auditEvent);
      return sub;
    });
  }

  async deletePushSubscription(userId: string, endpoint: string, auditEvent: AuditEventInput): Promise<boolean> {
    return this.db.transaction((tx) => {
      const gone = tx
        .delete(pushSubscriptions)
        .where(and(eq(pushSubscriptions.userId, userId), eq(pushSubscriptions.endpoint, endpoint)))
        .run();
      if (gone.changes === 0) return false;
      audit(tx, auditEvent);
      return true;
    });
  }

  async pushSubscriptionsOf(userIds: string[]): Promise<PushSubscriptionRecord[]> {
    if (userIds.length === 0) return [];
    return this.db
      .select()
      .from(pushSubscriptions)
      .where(inArray(pushSubscriptions.userId, userIds))
      .all()
      .map(pushSubscriptionFromRow);
  }

  async recordPushResult(id: string, result: 'ok' | 'failed' | 'gone', at: string): Promise<void> {
    if (result === 'gone') {
      this.db.delete(pushSubscriptions).where(eq(pushSubscriptions.id, id)).run();
      return;
    }
    // Counted in SQL: two gateways recording failures at once lose none.
    this.db
      .update(pushSubscriptions)
      .set(result === 'ok' ? { lastSuccessAt: at, failures: 0 } : { failures: sql`${pushSubscriptions.failures} + 1` })
      .where(eq(pushSubscriptions.id, id))
      .run();
  }

  async vapidKeys(
    create: () => { publicKey: string; privateKey: string },
    now: string,
  ): Promise<{ publicKey: string; privateKey: string }> {
    return this.db.transaction(
      (tx) => {
        const existing = tx.select().from(pushVapidKeys).where(eq(pushVapidKeys.id, 1)).get();
        if (existing) return { publicKey: existing.publicKey, privateKey: existing.privateKey };
        // Of two first starts at once, the primary key keeps one pair; both answer the stored one.
        tx.insert(pushVapidKeys)
          .values({ id: 1, ...create(), createdAt: now })
          .onConflictDoNothing()
          .run();
        const kept = tx.select().from(pushVapidKeys).where(eq(pushVapidKeys.id, 1)).get();
        if (!kept) throw new LetKiteError('internal', 'the VAPID key pair could not be stored');
        return { publicKey: kept.publicKey, privateKey: kept.privateKey };
      },
      { behavior: 'immediate' },
    );
  }
}
