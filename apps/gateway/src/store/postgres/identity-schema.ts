import { sql } from 'drizzle-orm';
import { customType, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { accounts, machines, users } from './schema';

/**
 * PostgreSQL twin of store/sqlite/identity-schema.ts (schema-drift.test.ts holds them together). Identity domain:
 * how people prove who they are (passkeys, password + TOTP, recovery codes), their browser sessions, one-time
 * links (owner setup, invitations), custom roles and groups. Core `accounts`, `users` and `memberships` hold who
 * belongs where; these tables hang off them. Secrets are stored hashed (SHA-256 for high-entropy tokens, argon2id
 * for passwords); TOTP secrets are sealed with the gateway's key (identity/totp-seed-cipher.ts).
 */

/**
 * SQLite keeps `passkeys.backed_up` as an integer 0/1 read as a boolean; the same integer column here, so a row
 * reads the same in both dialects.
 */
const integerBoolean = customType<{ data: boolean; driverData: number }>({
  dataType: () => 'integer',
  toDriver: (value) => (value ? 1 : 0),
  fromDriver: (value) => Number(value) === 1,
});

export const userPasswords = pgTable('user_passwords', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id),
  /** argon2id PHC string. */
  passwordHash: text('password_hash').notNull(),
  updatedAt: text('updated_at').notNull(),
});

export const passkeys = pgTable(
  'passkeys',
  {
    /** The WebAuthn credential id (base64url). */
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    /** COSE public key, base64url. */
    publicKey: text('public_key').notNull(),
    counter: integer('counter').notNull(),
    transports: text('transports').notNull().default('[]'),
    backedUp: integerBoolean('backed_up').notNull().default(sql`0`),
    createdAt: text('created_at').notNull(),
    lastUsedAt: text('last_used_at'),
  },
  (t) => [index('passkeys_user').on(t.userId)],
);

export const totpSecrets = pgTable('totp_secrets', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id),
  /** Base32 secret. */
  secret: text('secret').notNull(),
  /** The highest time step a code was accepted for: codes at or before it are refused (no replay). */
  lastStep: integer('last_step'),
  createdAt: text('created_at').notNull(),
});

export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    codeHash: text('code_hash').notNull(),
    usedAt: text('used_at'),
  },
  (t) => [index('recovery_codes_user').on(t.userId)],
);

export const webSessions = pgTable(
  'web_sessions',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** The account the person is working in; switchable among their memberships. */
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    csrfToken: text('csrf_token').notNull(),
    /** passkey | password_totp | recovery_code */
    method: text('method').notNull(),
    userAgent: text('user_agent'),
    createdAt: text('created_at').notNull(),
    lastSeenAt: text('last_seen_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    revokedAt: text('revoked_at'),
  },
  (t) => [uniqueIndex('web_sessions_hash').on(t.tokenHash), index('web_sessions_user').on(t.userId)],
);

/** Short-lived, single-use server state: WebAuthn challenges and TOTP secrets waiting for their first code. */
export const authChallenges = pgTable('auth_challenges', {
  id: text('id').primaryKey(),
  purpose: text('purpose').notNull(),
  /** What the challenge is bound to: a user id, a setup or invitation id, or a session id. */
  subject: text('subject').notNull(),
  value: text('value').notNull(),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at').notNull(),
  usedAt: text('used_at'),
});

export const setupLinks = pgTable(
  'setup_links',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
  },
  (t) => [
    uniqueIndex('setup_links_hash').on(t.tokenHash),
    // One live owner setup link per account, however many gateways start at once.
    uniqueIndex('setup_links_one_open').on(t.accountId).where(sql`used_at IS NULL`),
  ],
);

export const invitations = pgTable(
  'invitations',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    email: text('email').notNull(),
    role: text('role').notNull(),
    customRoleId: text('custom_role_id'),
    tokenHash: text('token_hash').notNull(),
    invitedBy: text('invited_by').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    acceptedAt: text('accepted_at'),
    acceptedBy: text('accepted_by'),
    revokedAt: text('revoked_at'),
  },
  (t) => [uniqueIndex('invitations_hash').on(t.tokenHash), index('invitations_account').on(t.accountId)],
);

export const customRoles = pgTable(
  'custom_roles',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    /** JSON array of permission names. */
    permissions: text('permissions').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [uniqueIndex('custom_roles_account_name').on(t.accountId, t.name)],
);

/** A member's custom role (a membership's built-in role stays in core `memberships.role`). */
export const memberCustomRoles = pgTable(
  'member_custom_roles',
  {
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    roleId: text('role_id')
      .notNull()
      .references(() => customRoles.id),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] })],
);

export const groups = pgTable(
  'groups',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [uniqueIndex('groups_account_name').on(t.accountId, t.name)],
);

export const groupMembers = pgTable(
  'group_members',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] })],
);

/** Machines a group claims: only the group's members (and owners/admins) reach them. */
export const groupMachines = pgTable(
  'group_machines',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    machineId: text('machine_id')
      .notNull()
      .references(() => machines.id),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.machineId] }), index('group_machines_machine').on(t.machineId)],
);
