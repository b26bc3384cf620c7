import { and, eq, gt, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { McpSessionRecord, McpSessionStore } from '../../mcp/mcp-session-store';
import { mcpSessions } from './mcp-sessions-schema';
import type { PgDatabase, PgDb } from './pg-database';

/**
 * The MCP sessions domain on PostgreSQL (cluster mode; migrations `pg-mcp-sessions`): any gateway of the cluster
 * serves any session id. A session's life is decided by the writes themselves — the touch only revives a row
 * that is still open and not idle, so a close or an expiry on another gateway is never undone.
 */
export class PgMcpSessionStore implements McpSessionStore {
  private readonly db: PgDb;
  private readonly hot;

  constructor(database: PgDatabase) {
    this.db = database.db;
    const p = sql.placeholder;
    // Every MCP request touches its session: both statements are prepared once per connection.
    this.hot = {
      read: this.db
        .select()
        .from(mcpSessions)
        .where(eq(mcpSessions.id, p('id')))
        .prepare('mcp_session_read'),
      touch: this.db
        .update(mcpSessions)
        .set({ lastSeenAt: sql`${p('now')}` })
        .where(
          and(eq(mcpSessions.id, p('id')), isNull(mcpSessions.closedAt), gt(mcpSessions.lastSeenAt, p('idleBefore'))),
        )
        .returning()
        .prepare('mcp_session_touch'),
    };
  }

  async open(session: Omit<McpSessionRecord, 'lastSeenAt' | 'closedAt'>): Promise<void> {
    await this.db.insert(mcpSessions).values({ ...session, lastSeenAt: session.createdAt });
  }

  async touch(
    id: string,
    input: { now: string; idleBefore: string; touchEveryMs: number },
  ): Promise<McpSessionRecord | null> {
    const [row] = await this.hot.read.execute({ id });
    if (!row || row.closedAt !== null || row.lastSeenAt <= input.idleBefore) return null;
    // Seen recently: answering from the read saves a write per request on a busy session.
    if (Date.parse(input.now) - Date.parse(row.lastSeenAt) < input.touchEveryMs) return row;
    // The write decides: a session closed, expired or pruned since the read (on any gateway) matches nothing.
    const [touched] = await this.hot.touch.execute({ id, now: input.now, idleBefore: input.idleBefore });
    return touched ?? null;
  }

  async close(id: string, now: string): Promise<boolean> {
    const closed = await this.db
      .update(mcpSessions)
      .set({ closedAt: now })
      .where(and(eq(mcpSessions.id, id), isNull(mcpSessions.closedAt)))
      .returning({ id: mcpSessions.id });
    return closed.length > 0;
  }

  async closeForCredential(credentialId: string, now: string): Promise<number> {
    const closed = await this.db
      .update(mcpSessions)
      .set({ closedAt: now })
      .where(and(eq(mcpSessions.credentialId, credentialId), isNull(mcpSessions.closedAt)))
      .returning({ id: mcpSessions.id });
    return closed.length;
  }

  async closeForUser(userId: string, accountId: string | undefined, now: string): Promise<number> {
    const closed = await this.db
      .update(mcpSessions)
      .set({ closedAt: now })
      .where(
        and(
          eq(mcpSessions.userId, userId),
          accountId === undefined ? undefined : eq(mcpSessions.accountId, accountId),
          isNull(mcpSessions.closedAt),
        ),
      )
      .returning({ id: mcpSessions.id });
    return closed.length;
  }

  async prune(before: string): Promise<number> {
    const pruned = await this.db
      .delete(mcpSessions)
      .where(
        or(and(isNotNull(mcpSessions.closedAt), lt(mcpSessions.closedAt, before)), lt(mcpSessions.lastSeenAt, before)),
      )
      .returning({ id: mcpSessions.id });
    return pruned.length;
  }
}
