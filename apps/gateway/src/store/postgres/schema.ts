import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgSequence, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * PostgreSQL schema of the core domain (cluster mode): the same tables, columns and indexes as
 * store/sqlite/schema.ts, so one value reads the same in both (schema-drift.test.ts holds them together). Times
 * are ISO-8601 UTC strings, JSON is text (the audit chain hashes `details` byte for byte; jsonb would reorder
 * keys). Secrets never appear here: tokens are stored as SHA-256 hashes of high-entropy random values.
 */

export const accounts = pgTable('accounts', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: text('created_at').notNull(),
});

/**
 * The one row (id 1) naming the account a first start created. Two gateways starting at once on an empty
 * database both insert it with ON CONFLICT DO NOTHING; the one whose insert counts creates the account.
 */
export const gatewayBootstrap = pgTable('gateway_bootstrap', {
  id: integer('id').primaryKey(),
  accountId: text('account_id').notNull(),
  createdAt: text('created_at').notNull(),
});

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  email: text('email'),
  createdAt: text('created_at').notNull(),
});

export const memberships = pgTable(
  'memberships',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    role: text('role').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [uniqueIndex('memberships_account_user').on(t.accountId, t.userId)],
);

export const apiTokens = pgTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    tokenHash: text('token_hash').notNull(),
    /** The grant (policy, machines, scopes) as JSON. */
    grant: text('grant').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at'),
    revokedAt: text('revoked_at'),
    lastUsedAt: text('last_used_at'),
  },
  (t) => [uniqueIndex('api_tokens_hash').on(t.tokenHash)],
);

export const joinTokens = pgTable(
  'join_tokens',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    tokenHash: text('token_hash').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    machineId: text('machine_id'),
  },
  (t) => [uniqueIndex('join_tokens_hash').on(t.tokenHash)],
);

export const machines = pgTable(
  'machines',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    publicKey: text('public_key').notNull(),
    hostname: text('hostname'),
    os: text('os'),
    osRelease: text('os_release'),
    arch: text('arch'),
    agentVersion: text('agent_version'),
    labels: text('labels').notNull().default('[]'),
    ceiling: text('ceiling'),
    ceilingSource: text('ceiling_source'),
    ceilingError: text('ceiling_error'),
    enrolledAt: text('enrolled_at').notNull(),
    lastSeenAt: text('last_seen_at'),
    revokedAt: text('revoked_at'),
  },
  (t) => [
    index('machines_account_name').on(t.accountId, t.name),
    // The page order of the account's live machines (Store.pageReachableMachines): names as bytes, then id. The
    // name's collation is spelled out because PostgreSQL's default one is linguistic and could not serve it.
    index('machines_live_page').on(t.accountId, sql`"name" COLLATE "C"`, t.id).where(sql`"revoked_at" IS NULL`),
  ],
);

/** Audit row ids (see `auditEvents.id`). */
export const auditEventsIdSeq = pgSequence('audit_events_id_seq');

export const auditEvents = pgTable(
  'audit_events',
  {
    // Assigned by insertAudit from audit_events_id_seq while the account's chain row is locked, so within an
    // account ids follow the chain; never reused, also after pruning.
    id: bigint('id', { mode: 'number' }).primaryKey(),
    accountId: text('account_id').notNull(),
    at: text('at').notNull(),
    /** Who: `user:<id>`, `token:<id>`, `agent:<machine id>`, `system`. Never a secret. */
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    target: text('target'),
    /** For tool calls: allow | confirm | approve | deny, or the refusing error code. */
    decision: text('decision'),
    /** ok | error code. */
    outcome: text('outcome'),
    /** Masked arguments, reasons, approval and anything else the action wants kept (JSON). */
    details: text('details').notNull().default(sql`'{}'`),
    // Typed columns written at insert time so the activity log filters without parsing `details`.
    /** The person behind the actor (the connection's or token's owner for a tool call). */
    userId: text('user_id'),
    /** For tool calls: the MCP tool name. */
    tool: text('tool'),
    machineId: text('machine_id'),
    /** The OAuth connection or API token the call came through. */
    credentialId: text('credential_id'),
    /** The MCP client's own name for itself (unverified). */
    clientName: text('client_name'),
    requestId: text('request_id'),
    durationMs: integer('duration_ms'),
    /** The hash chain (per account): the previous row's `hash`, and SHA-256 over this row's canonical encoding. */
    prevHash: text('prev_hash'),
    hash: text('hash'),
  },
  (t) => [
    index('audit_account_at').on(t.accountId, t.at),
    index('audit_account_action').on(t.accountId, t.action, t.id),
    index('audit_account_user').on(t.accountId, t.userId, t.id),
    index('audit_account_tool').on(t.accountId, t.tool, t.id),
    index('audit_account_machine').on(t.accountId, t.machineId, t.id),
    index('audit_account_credential').on(t.accountId, t.credentialId, t.id),
    index('audit_account_outcome').on(t.accountId, t.outcome, t.id),
    // Two rows naming the same predecessor would fork the chain: the database refuses the second.
    uniqueIndex('audit_account_prev_hash').on(t.accountId, t.prevHash),
  ],
);

/**
 * Per account: the head of the audit hash chain (the last row written), the anchor left by pruning (the id and
 * hash of the last pruned row, where verification starts), and the retention setting.
 */
export const auditChains = pgTable('audit_chains', {
  accountId: text('account_id').primaryKey(),
  headId: bigint('head_id', { mode: 'number' }),
  headHash: text('head_hash'),
  anchorId: bigint('anchor_id', { mode: 'number' }),
  anchorHash: text('anchor_hash'),
  /** Keep rows this many days; null keeps them for ever. */
  retentionDays: integer('retention_days'),
});

/**
 * The first time a connection (or API token) changed something on a machine: one row per pair, inserted with
 * ON CONFLICT DO NOTHING, so of two racing first calls exactly one notifies the person who connected it.
 */
export const takeoverNotices = pgTable(
  'takeover_notices',
  {
    accountId: text('account_id').notNull(),
    credentialId: text('credential_id').notNull(),
    machineId: text('machine_id').notNull(),
    userId: text('user_id').notNull(),
    tool: text('tool').notNull(),
    at: text('at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.credentialId, t.machineId] })],
);
