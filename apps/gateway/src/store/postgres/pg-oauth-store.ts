import { and, desc, eq, gt, inArray, isNull, lt, sql } from 'drizzle-orm';
import type {
  AccessTokenRecord,
  AuthorizationCode,
  CodeOutcome,
  Connection,
  IssuedTokens,
  OAuthStore,
  RefreshOutcome,
  RegisteredClient,
} from '../../oauth/oauth-store';
import {
  clientFromRow,
  clientToRow,
  codeFromRow,
  codeToRow,
  connectionFromCode,
  connectionFromRow,
  connectionToRow,
  tokenRows,
} from '../oauth-rows';
import type { AuditEventInput } from '../types';
import * as schema from './oauth-schema';
import { insertAudit } from './pg-audit';
import type { PgDatabase, PgDb, PgTx } from './pg-database';

/**
 * The OAuth domain on PostgreSQL (cluster mode), the twin of store/sqlite/sqlite-oauth-store.ts; audit rows go to
 * core `audit_events` in the same transaction. Code redemption and refresh rotation decide by a conditional
 * `UPDATE … RETURNING`: PostgreSQL makes a concurrent one wait for the row and re-checks its `WHERE` after the
 * first commits, so of any number of gateways exactly one wins and the others take the reuse path.
 */
export class PgOAuthStore implements OAuthStore {
  private readonly db: PgDb;
  // Every MCP request over OAuth reads its access token and touches its connection: prepared once per connection.
  private readonly accessTokenQuery;
  private readonly touchQuery;

  constructor(private readonly database: PgDatabase) {
    this.db = database.db;
    this.accessTokenQuery = this.db
      .select()
      .from(schema.oauthAccessTokens)
      .innerJoin(schema.oauthConnections, eq(schema.oauthAccessTokens.connectionId, schema.oauthConnections.id))
      .where(
        and(
          eq(schema.oauthAccessTokens.tokenHash, sql.placeholder('hash')),
          gt(schema.oauthAccessTokens.expiresAt, sql.placeholder('now')),
          isNull(schema.oauthConnections.revokedAt),
        ),
      )
      .prepare('oauth_access_token');
    this.touchQuery = this.db
      .update(schema.oauthConnections)
      .set({ lastUsedAt: sql`${sql.placeholder('at')}` })
      .where(eq(schema.oauthConnections.id, sql.placeholder('id')))
      .prepare('oauth_touch_connection');
  }

  async registerClient(client: RegisteredClient): Promise<void> {
    await this.db.insert(schema.oauthClients).values(clientToRow(client));
  }

  async getClient(clientId: string): Promise<RegisteredClient | null> {
    const [r] = await this.db.select().from(schema.oauthClients).where(eq(schema.oauthClients.clientId, clientId));
    return r ? clientFromRow(r) : null;
  }

  async pruneUnusedClients(createdBefore: string): Promise<number> {
    // "Used" is read from what a use leaves behind: an authorization code (kept after redemption) or a connection.
    const gone = await this.db
      .delete(schema.oauthClients)
      .where(
        and(
          lt(schema.oauthClients.createdAt, createdBefore),
          sql`NOT EXISTS (SELECT 1 FROM oauth_authorization_codes c WHERE c.client_id = oauth_clients.client_id)`,
          sql`NOT EXISTS (SELECT 1 FROM oauth_connections k WHERE k.client_id = oauth_clients.client_id)`,
        ),
      )
      .returning({ clientId: schema.oauthClients.clientId });
    return gone.length;
  }

  async createAuthorizationCode(codeHash: string, code: AuthorizationCode, audit: AuditEventInput): Promise<void> {
    await this.database.transaction(async (tx) => {
      await tx.insert(schema.oauthAuthorizationCodes).values(codeToRow(codeHash, code));
      await insertAudit(tx, audit);
    });
  }

  async redeemAuthorizationCode(
    codeHash: string,
    input: {
      now: string;
      connectionId: string;
      check: (code: AuthorizationCode) => boolean;
      tokens: IssuedTokens;
      audit: (connection: Connection) => AuditEventInput;
      reuseAudit: (code: { accountId: string; connectionId: string }) => AuditEventInput;
    },
  ): Promise<CodeOutcome> {
    return this.database.transaction(async (tx): Promise<CodeOutcome> => {
      const codes = schema.oauthAuthorizationCodes;
      // The decision is this conditional write: of concurrent redemptions (on any number of gateways) exactly one
      // matches `used_at IS NULL`; the others wait for its commit, match no longer, and find the code used with
      // the connection it made. A failed check burns the code too (the transaction commits): one try per code.
      const [r] = await tx
        .update(codes)
        .set({ usedAt: input.now })
        .where(and(eq(codes.codeHash, codeHash), isNull(codes.usedAt)))
        .returning();
      if (!r) {
        const [used] = await tx.select().from(codes).where(eq(codes.codeHash, codeHash));
        if (!used) return { kind: 'invalid' };
        // RFC 6749 §4.1.2: a code used twice revokes the tokens issued for it.
        if (used.connectionId) {
          const audit = input.reuseAudit({ accountId: used.accountId, connectionId: used.connectionId });
          await this.revokeIn(tx, used.connectionId, input.now, audit);
        }
        return { kind: 'reused', connectionId: used.connectionId };
      }
      const connection = connectionFromCode(codeFromRow(r), input);
      if (!connection) return { kind: 'invalid' };
      await tx.insert(schema.oauthConnections).values(connectionToRow(connection));
      // In the same transaction as the use: a concurrent redemption waiting on the code row sees both at once.
      await tx.update(codes).set({ connectionId: connection.id }).where(eq(codes.codeHash, codeHash));
      await this.insertTokens(tx, connection.id, input.now, input.tokens);
      await insertAudit(tx, input.audit(connection));
      return { kind: 'issued', connection };
    });
  }

  async rotateRefreshToken(
    refreshTokenHash: string,
    input: { now: string; clientId: string; tokens: IssuedTokens; reuseAudit: (c: Connection) => AuditEventInput },
  ): Promise<RefreshOutcome> {
    return this.database.transaction(async (tx): Promise<RefreshOutcome> => {
      const t = schema.oauthRefreshTokens;
      const c = schema.oauthConnections;
      // The decision is this conditional write: of concurrent refreshes with one token exactly one matches
      // `rotated_at IS NULL` (the others wait for the row and re-check it); they see a rotated token below and
      // revoke the grant (RFC 9700 rotation), or find it already revoked.
      const [rotated] = await tx
        .update(t)
        .set({ rotatedAt: input.now })
        .where(
          and(
            eq(t.tokenHash, refreshTokenHash),
            isNull(t.rotatedAt),
            gt(t.expiresAt, input.now),
            inArray(
              t.connectionId,
              tx
                .select({ id: c.id })
                .from(c)
                .where(and(isNull(c.revokedAt), eq(c.clientId, input.clientId))),
            ),
          ),
        )
        .returning({ connectionId: t.connectionId });
      if (rotated) {
        const [row] = await tx.select().from(c).where(eq(c.id, rotated.connectionId));
        if (!row) return { kind: 'invalid' };
        await this.insertTokens(tx, rotated.connectionId, input.now, input.tokens);
        return { kind: 'rotated', connection: connectionFromRow(row) };
      }
      const [r] = await tx
        .select()
        .from(t)
        .innerJoin(c, eq(t.connectionId, c.id))
        .where(eq(t.tokenHash, refreshTokenHash));
      if (!r) return { kind: 'invalid' };
      const connection = connectionFromRow(r.oauth_connections);
      if (connection.revokedAt !== null || connection.clientId !== input.clientId) return { kind: 'invalid' };
      if (r.oauth_refresh_tokens.rotatedAt !== null) {
        // Reuse of a rotated token: either the client or a thief holds a stale copy; revoke the whole grant. Of two
        // reuses at once one revokes (and audits); the other finds it revoked by then and is merely invalid.
        const revoked = await this.revokeIn(tx, connection.id, input.now, input.reuseAudit(connection));
        if (!revoked) return { kind: 'invalid' };
        return { kind: 'reused', connection: { ...connection, revokedAt: input.now } };
      }
      return { kind: 'invalid' };
    });
  }

  async findAccessToken(accessTokenHash: string, now: string): Promise<AccessTokenRecord | null> {
    const [r] = await this.accessTokenQuery.execute({ hash: accessTokenHash, now });
    return r
      ? { connection: connectionFromRow(r.oauth_connections), expiresAt: r.oauth_access_tokens.expiresAt }
      : null;
  }

  async touchConnection(id: string, at: string): Promise<void> {
    await this.touchQuery.execute({ id, at });
  }

  async revokeToken(
    tokenHash: string,
    clientId: string,
    now: string,
    audit: (c: Connection) => AuditEventInput,
  ): Promise<Connection | null> {
    return this.database.transaction(async (tx) => {
      const [access] = await tx
        .select()
        .from(schema.oauthAccessTokens)
        .innerJoin(schema.oauthConnections, eq(schema.oauthAccessTokens.connectionId, schema.oauthConnections.id))
        .where(eq(schema.oauthAccessTokens.tokenHash, tokenHash));
      if (access) {
        if (access.oauth_connections.clientId === clientId) {
          await tx.delete(schema.oauthAccessTokens).where(eq(schema.oauthAccessTokens.tokenHash, tokenHash));
        }
        return null;
      }
      const [refresh] = await tx
        .select()
        .from(schema.oauthRefreshTokens)
        .innerJoin(schema.oauthConnections, eq(schema.oauthRefreshTokens.connectionId, schema.oauthConnections.id))
        .where(eq(schema.oauthRefreshTokens.tokenHash, tokenHash));
      if (!refresh || refresh.oauth_connections.clientId !== clientId) return null;
      const connection = connectionFromRow(refresh.oauth_connections);
      if (connection.revokedAt !== null) return null;
      // The conditional write in revokeIn decides: of two revocations at once only one reports the connection.
      if (!(await this.revokeIn(tx, connection.id, now, audit(connection)))) return null;
      return { ...connection, revokedAt: now };
    });
  }

  async getConnection(id: string): Promise<Connection | null> {
    const [r] = await this.db.select().from(schema.oauthConnections).where(eq(schema.oauthConnections.id, id));
    return r ? connectionFromRow(r) : null;
  }

  async listConnections(
    accountId: string,
    options: { userId?: string; includeRevoked?: boolean },
  ): Promise<Connection[]> {
    const conditions = [eq(schema.oauthConnections.accountId, accountId)];
    if (options.userId !== undefined) conditions.push(eq(schema.oauthConnections.userId, options.userId));
    if (!options.includeRevoked) conditions.push(isNull(schema.oauthConnections.revokedAt));
    const rows = await this.db
      .select()
      .from(schema.oauthConnections)
      .where(and(...conditions))
      .orderBy(desc(schema.oauthConnections.createdAt));
    return rows.map(connectionFromRow);
  }

  async revokeConnection(id: string, now: string, audit: AuditEventInput): Promise<boolean> {
    return this.database.transaction((tx) => this.revokeIn(tx, id, now, audit));
  }

  /**
   * Revokes a connection and drops its tokens. The conditional write decides: the connection's row lock orders
   * concurrent revocations, and only the one that found it live audits and answers true.
   */
  private async revokeIn(tx: PgTx, id: string, now: string, audit: AuditEventInput): Promise<boolean> {
    const changed = await tx
      .update(schema.oauthConnections)
      .set({ revokedAt: now })
      .where(and(eq(schema.oauthConnections.id, id), isNull(schema.oauthConnections.revokedAt)))
      .returning({ id: schema.oauthConnections.id });
    // Deleted after the connection row is locked, so tokens a rotation committed meanwhile go too.
    await tx.delete(schema.oauthAccessTokens).where(eq(schema.oauthAccessTokens.connectionId, id));
    await tx.delete(schema.oauthRefreshTokens).where(eq(schema.oauthRefreshTokens.connectionId, id));
    if (changed.length === 1) await insertAudit(tx, audit);
    return changed.length === 1;
  }

  private async insertTokens(tx: PgTx, connectionId: string, now: string, tokens: IssuedTokens): Promise<void> {
    const rows = tokenRows(connectionId, now, tokens);
    await tx.insert(schema.oauthAccessTokens).values(rows.access);
    await tx.insert(schema.oauthRefreshTokens).values(rows.refresh);
  }
}
