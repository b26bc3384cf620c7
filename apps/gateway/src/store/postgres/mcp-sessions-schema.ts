import { index, pgTable, text } from 'drizzle-orm/pg-core';

/**
 * PostgreSQL twin of store/sqlite/mcp-sessions-schema.ts (docs/design/coordination.md): one row per session id a
 * gateway handed out in `initialize`, so any gateway serves any session and idle sessions expire. Times are
 * ISO-8601 UTC strings.
 */
export const mcpSessions = pgTable(
  'mcp_sessions',
  {
    /** The `Mcp-Session-Id`: `mcs_` + 128 random bits (base64url). */
    id: text('id').primaryKey(),
    /** The API token or OAuth connection that opened it; every later request must carry the same one. */
    credentialId: text('credential_id').notNull(),
    userId: text('user_id').notNull(),
    accountId: text('account_id').notNull(),
    /** What the client declared in `initialize` (unverified; shown on approval requests). */
    clientName: text('client_name'),
    clientVersion: text('client_version'),
    protocolVersion: text('protocol_version'),
    createdAt: text('created_at').notNull(),
    lastSeenAt: text('last_seen_at').notNull(),
    /** Set by DELETE, revocation or sign-out everywhere; a closed id answers 404 forever. */
    closedAt: text('closed_at'),
  },
  (t) => [
    index('mcp_sessions_credential').on(t.credentialId),
    index('mcp_sessions_user').on(t.userId, t.accountId),
    index('mcp_sessions_last_seen').on(t.lastSeenAt),
  ],
);
