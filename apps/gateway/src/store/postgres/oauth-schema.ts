import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { accounts, users } from './schema';

/**
 * PostgreSQL twin of store/sqlite/oauth-schema.ts (schema-drift.test.ts holds them together). Tables of the OAuth domain (see src/oauth/oauth-store.ts). Codes and tokens are SHA-256 hashes of
 * high-entropy random values; JSON columns hold metadata, tool groups and grants.
 */

export const oauthClients = pgTable('oauth_clients', {
  clientId: text('client_id').primaryKey(),
  metadata: text('metadata').notNull(),
  createdAt: text('created_at').notNull(),
});

export const oauthConnections = pgTable(
  'oauth_connections',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    clientId: text('client_id').notNull(),
    clientName: text('client_name'),
    redirectUri: text('redirect_uri').notNull(),
    resource: text('resource').notNull(),
    groups: text('groups').notNull(),
    grant: text('grant').notNull(),
    createdAt: text('created_at').notNull(),
    lastUsedAt: text('last_used_at'),
    revokedAt: text('revoked_at'),
  },
  (t) => [index('oauth_connections_account_user').on(t.accountId, t.userId)],
);

export const oauthAuthorizationCodes = pgTable('oauth_authorization_codes', {
  codeHash: text('code_hash').primaryKey(),
  accountId: text('account_id').notNull(),
  userId: text('user_id').notNull(),
  clientId: text('client_id').notNull(),
  clientName: text('client_name'),
  redirectUri: text('redirect_uri').notNull(),
  codeChallenge: text('code_challenge').notNull(),
  resource: text('resource').notNull(),
  groups: text('groups').notNull(),
  grant: text('grant').notNull(),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at').notNull(),
  usedAt: text('used_at'),
  /** The connection the code created, so a replayed code can revoke it. */
  connectionId: text('connection_id'),
});

export const oauthAccessTokens = pgTable(
  'oauth_access_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    connectionId: text('connection_id')
      .notNull()
      .references(() => oauthConnections.id, { onDelete: 'cascade' }),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
  },
  (t) => [index('oauth_access_tokens_connection').on(t.connectionId)],
);

export const oauthRefreshTokens = pgTable(
  'oauth_refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    connectionId: text('connection_id')
      .notNull()
      .references(() => oauthConnections.id, { onDelete: 'cascade' }),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    /** Set when this token was exchanged for a new one; presenting it again means it leaked. */
    rotatedAt: text('rotated_at'),
  },
  (t) => [index('oauth_refresh_tokens_connection').on(t.connectionId)],
);
