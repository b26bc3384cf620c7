import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * PostgreSQL twin of store/sqlite/approvals-schema.ts (schema-drift.test.ts holds them together; booleans stay
 * integer 0/1 so a row reads the same). The approvals domain (see docs/design/store-domains.md): approval requests, the passkey challenges bound to
 * them, the web-push subscriptions of approvers and the gateway's VAPID key pair. Times are ISO-8601 UTC strings.
 */

export const approvalRequests = pgTable(
  'approval_requests',
  {
    /** `apr_` + 128 random bits (hex). */
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    /** The API token or connection the call came through. */
    credentialId: text('credential_id').notNull(),
    /** The person who connected the AI (the requester). */
    requesterId: text('requester_id').notNull(),
    /** The MCP client's name as it declared itself in `initialize` (unverified). */
    clientName: text('client_name'),
    tool: text('tool').notNull(),
    machineId: text('machine_id').notNull(),
    machineName: text('machine_name').notNull(),
    /** The canonical JSON of the arguments that are hashed (shown to the approver byte for byte). */
    args: text('args').notNull(),
    argsHash: text('args_hash').notNull(),
    policyHash: text('policy_hash').notNull(),
    policyName: text('policy_name').notNull(),
    /** Why a human is needed (JSON: the rule or policy setting). */
    reason: text('reason').notNull(),
    approvers: text('approvers').notNull(),
    /** Who was asked, as user ids (JSON array), resolved when the request was made. */
    askedUserIds: text('asked_user_ids').notNull(),
    status: text('status').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    decidedAt: text('decided_at'),
    decidedBy: text('decided_by'),
    /** passkey | totp (approve) or session (deny). */
    decidedWith: text('decided_with'),
    usedAt: text('used_at'),
    /**
     * The binding an approver's passkey signs (canonical JSON, @letkite/protocol approval-proof.ts): the exact
     * agent request on each machine. Null for calls that do not run on an agent (transfers).
     */
    proofBinding: text('proof_binding'),
    /** 1 when a target machine verifies approvals itself: only a passkey can approve, never TOTP. */
    passkeyOnly: integer('passkey_only').notNull().default(0),
    /** The approving passkey assertion (JSON: credential_id, authenticator_data, client_data_json, signature). */
    assertion: text('assertion'),
  },
  (t) => [
    index('approval_requests_binding').on(t.credentialId, t.tool, t.machineId, t.argsHash, t.policyHash),
    index('approval_requests_account_created').on(t.accountId, t.createdAt),
    index('approval_requests_status_expires').on(t.status, t.expiresAt),
    // At most one pending request per binding, whatever the number of gateways asking at once.
    uniqueIndex('approval_requests_one_pending')
      .on(t.credentialId, t.tool, t.machineId, t.argsHash, t.policyHash)
      .where(sql`status = 'pending'`),
  ],
);

/**
 * One row per credential that ever asked for an approval, written first by each `gate`: the row's lock
 * serializes one credential's gates on every dialect (PostgreSQL holds it to commit), so the pending count that
 * the limit reads next is current. `gates` counts the calls, which nothing needs but makes the write real.
 */
export const approvalGateLocks = pgTable('approval_gate_locks', {
  credentialId: text('credential_id').primaryKey(),
  gates: integer('gates').notNull().default(0),
});

/** A passkey challenge bound to one approval and one approver; usable once, for a few minutes. */
export const approvalChallenges = pgTable('approval_challenges', {
  challenge: text('challenge').primaryKey(),
  approvalId: text('approval_id')
    .notNull()
    .references(() => approvalRequests.id),
  userId: text('user_id').notNull(),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at').notNull(),
  usedAt: text('used_at'),
});

export const pushSubscriptions = pgTable(
  'push_subscriptions',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    endpoint: text('endpoint').notNull(),
    p256dh: text('p256dh').notNull(),
    auth: text('auth').notNull(),
    userAgent: text('user_agent'),
    createdAt: text('created_at').notNull(),
    lastSuccessAt: text('last_success_at'),
    failures: integer('failures').notNull().default(0),
  },
  (t) => [uniqueIndex('push_subscriptions_endpoint').on(t.endpoint), index('push_subscriptions_user').on(t.userId)],
);

/** The gateway's one VAPID key pair, generated on first start (row id is always 1). */
export const pushVapidKeys = pgTable('push_vapid_keys', {
  id: integer('id').primaryKey(),
  publicKey: text('public_key').notNull(),
  privateKey: text('private_key').notNull(),
  createdAt: text('created_at').notNull(),
});
