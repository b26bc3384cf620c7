import { customType, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { accounts } from './schema';

/**
 * A boolean kept as integer 0/1, as SQLite's `integer({ mode: 'boolean' })` keeps it, so the column has the same
 * type on both dialects (schema-drift.test.ts) and reads back as a JavaScript boolean on both.
 */
const integerBoolean = customType<{ data: boolean; driverData: number }>({
  dataType: () => 'integer',
  toDriver: (value) => (value ? 1 : 0),
  fromDriver: (value) => Number(value) !== 0,
});

/**
 * PostgreSQL twin of store/sqlite/policies-schema.ts. The account's own policies (DESIGN §4;
 * docs/design/account-policies.md): one row per policy holds its current revision; every revision ever saved is
 * kept in `policy_versions`. The built-ins `full` and `read-only` are not stored: they are code.
 */
export const policies = pgTable(
  'policies',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    /** The current revision, 1 on create, +1 on every update (the decision of a concurrent update, see the store). */
    version: integer('version').notNull(),
    /** The TOML the person wrote, comments and all. */
    source: text('source').notNull(),
    /** The parsed policy (defaults applied) as JSON: what resolution reads on every call. */
    parsed: text('parsed').notNull(),
    createdAt: text('created_at').notNull(),
    createdBy: text('created_by').notNull(),
    updatedAt: text('updated_at').notNull(),
    updatedBy: text('updated_by').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.name] })],
);

/** Every revision of every policy, the current one included. */
export const policyVersions = pgTable(
  'policy_versions',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    version: integer('version').notNull(),
    source: text('source').notNull(),
    parsed: text('parsed').notNull(),
    author: text('author').notNull(),
    at: text('at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.name, t.version] })],
);

/**
 * The account switches (issue #14): transports and tool groups an owner turns off for the whole account. One row
 * per account; no row means everything on (the state before switches existed).
 */
export const accountSettings = pgTable('account_settings', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accounts.id),
  mcpHttp: integerBoolean('mcp_http').notNull(),
  stdioBridge: integerBoolean('stdio_bridge').notNull(),
  legacySse: integerBoolean('legacy_sse').notNull(),
  /** Tool groups (OAuth scope names) switched off, as a JSON array. */
  disabledToolGroups: text('disabled_tool_groups').notNull(),
  updatedAt: text('updated_at').notNull(),
  updatedBy: text('updated_by').notNull(),
});
