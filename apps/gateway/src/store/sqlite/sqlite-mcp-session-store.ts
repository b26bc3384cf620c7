import { and, eq, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { McpSessionRecord, McpSessionStore } from '../../mcp/mcp-session-store';
import { mcpSessions } from './mcp-sessions-schema';
import { migrateSqliteDomain, type SqliteStore } from './sqlite-store';

/** The MCP sessions domain on the shared SQLite database (its own migrations stream, sqlite-mcp-sessions). */
export class SqliteMcpSessionStore implements McpSessionStore {
  private readonly db: SqliteStore['db'];
  /**
   * `touch` runs on every MCP request: its two statements are prepared once (a drizzle query prepared per call
   * costs more than running it), with the same guards as written out below.
   */
  private readonly touchRead;
  private readonly touchWrite;

  constructor(core: SqliteStore) {
    this.db = core.db;
    migrateSqliteDomain(core.db, 'sqlite-mcp-sessions', '__drizzle_migrations_mcp_sessions');
    this.touchRead = this.db
      .select()
      .from(mcpSessions)
      .where(eq(mcpSessions.id, sql.placeholder('id')))
      .prepare();
    // Guarded like the read: a session closed or expired meanwhile (on another gateway) is not revived.
    this.touchWrite = this.db
      .update(mcpSessions)
      .set({ lastSeenAt: sql`${sql.placeholder('now')}` })
      .where(and(eq(mcpSessions.id, sql.placeholder('id')), isNull(mcpSessions.closedAt)))
      .returning()
      .prepare();
  }

  async open(session: Omit<McpSessionRecord, 'lastSeenAt' | 'closedAt'>): Promise<void> {
    this.db
      .insert(mcpSessions)
      .values({ ...session, lastSeenAt: session.createdAt })
      .run();
  }

  async touch(
    id: string,
    input: { now: string; idleBefore: string; touchEveryMs: number },
  ): Promise<McpSessionRecord | null> {
    const row = this.touchRead.get({ id });
    if (!row || row.closedAt !== null || row.lastSeenAt <= input.idleBefore) return null;
    if (Date.parse(input.now) - Date.parse(row.lastSeenAt) < input.touchEveryMs) return row;
    const touched = this.touchWrite.get({ id, now: input.now });
    return touched && touched.lastSeenAt > input.idleBefore ? touched : null;
  }

  async close(id: string, now: string): Promise<boolean> {
    const r = this.db
      .update(mcpSessions)
      .set({ closedAt: now })
      .where(and(eq(mcpSessions.id, id), isNull(mcpSessions.closedAt)))
      .run();
    return r.changes > 0;
  }

  async closeForCredential(credentialId: string, now: string): Promise<number> {
    return this.db
      .update(mcpSessions)
      .set({ closedAt: now })
      .where(and(eq(mcpSessions.credentialId, credentialId), isNull(mcpSessions.closedAt)))
      .run().changes;
  }

  async closeForUser(userId: string, accountId: string | undefined, now: string): Promise<number> {
    return this.db
      .update(mcpSessions)
      .set({ closedAt: now })
      .where(
        and(
          eq(mcpSessions.userId, userId),
          accountId === undefined ? undefined : eq(mcpSessions.accountId, accountId),
          isNull(mcpSessions.closedAt),
        ),
      )
      .run().changes;
  }

  async prune(before: string): Promise<number> {
    return this.db
      .delete(mcpSessions)
      .where(
        or(and(isNotNull(mcpSessions.closedAt), lt(mcpSessions.closedAt, before)), lt(mcpSessions.lastSeenAt, before)),
      )
      .run().changes;
  }
}
