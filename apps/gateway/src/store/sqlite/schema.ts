import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/**
 * SQLite schema (drizzle). Times are ISO-8601 UTC strings so the same values read the same in PostgreSQL.
 * Secrets never appear here: tokens are stored as SHA-256 hashes of high-entropy random values.
 */

export const accounts = sqliteTable('accounts', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: text('created_at').notNull(),
});

/**
 * The one row (id 1) naming the account a first start created. Two gateways starting at once on an empty
 * database both insert it with ON CONFLICT DO NOTHING; the one whose insert counts creates the account.
 */
export const gatewayBootstrap = sqliteTable('gateway_bootstrap', {
  id: integer('id').primaryKey(),
  accountId: text('account_id').notNull(),
  createdAt: text('created_at').notNull(),
});

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  email: text('email'),
  createdAt: text('created_at').notNull(),
});

export const memberships = sqliteTable(
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

export const apiTokens = sqliteTable(
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

export const joinTokens = sqliteTable(
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

export const machines = sqliteTable(
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
  (t) => [index('machines_account_name').on(t.accountId, t.name)],
);

export const auditEvents = sqliteTable(
  'audit_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
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
    details: text('details').notNull().default(sql`'{}'`),
  },
  (t) => [index('audit_account_at').on(t.accountId, t.at)],
);
