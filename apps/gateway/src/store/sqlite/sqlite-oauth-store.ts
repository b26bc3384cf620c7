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
import { insertAudit, sqliteClientOf } from './audit';
import * as schema from './oauth-schema';
import { migrateSqliteDomain, type SqliteStore } from './sqlite-store';

type Tx = Parameters<Parameters<SqliteStore['db']['transaction']>[0]>[0];

/** The OAuth domain on the shared SQLite database; audit rows go to core `audit_events` in the same transaction. */
export class SqliteOAuthStore implements OAuthStore {
  private readonly db: SqliteStore['db'];

  constructor(core: SqliteStore) {
    this.db = core.db;
    migrateSqliteDomain(core.db, 'sqlite-oauth', '__drizzle_migrations_oauth');
  }

  async registerClient(client: RegisteredClient): Promise<void> {
    this.db.insert(schema.oauthClients).values(clientToRow(client)).run();
  }

  async getClient(clientId: string): Promise<RegisteredClient | null> {
    const r = this.db.select().from(schema.oauthClients).where(eq(schema.oauthClients.clientId, clientId)).get();
    return r ? clientFromRow(r) : null;
  }

  async pruneUnusedClients(createdBefore: string): Promise<number> {
    // "Used" is read from what a use leaves behind: an authorization code (kept after redemption) or a connection.
    return this.db
      .delete(schema.oauthClients)
      .where(
        and(
          lt(schema.oauthClients.createdAt, createdBefore),
          sql`NOT EXISTS (SELECT 1 FROM oauth_authorization_codes c WHERE c.client_id = oauth_clients.client_id)`,
          sql`NOT EXISTS (SELECT 1 FROM oauth_connections k WHERE k.client_id = oauth_clients.client_id)`,
        ),
      )
      .run().changes;
  }

  async createAuthorizationCode(codeHash: string, code: AuthorizationCode, audit: AuditEventInput): Promise<void> {
    this.db.transaction((tx) => {
      tx.insert(schema.oauthAuthorizationCodes).values(codeToRow(codeHash, code)).run();
      insertAudit(sqliteClientOf(tx), audit);
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
    return this.db.transaction((tx): CodeOutcome => {
      // The decision is this conditional write: of concurrent redemptions (on any number of gateways) exactly one
      // matches `used_at IS NULL`; the others find the code used and take the reuse path. A failed check burns the
      // code too: a guessed verifier gets one try.
      const r = tx
        .update(schema.oauthAuthorizationCodes)
        .set({ usedAt: input.now })
        .where(
          and(eq(schema.oauthAuthorizationCodes.codeHash, codeHash), isNull(schema.oauthAuthorizationCodes.usedAt)),
        )
        .returning()
        .get();
      if (!r) {
        const used = tx
          .select()
          .from(schema.oauthAuthorizationCodes)
          .where(eq(schema.oauthAuthorizationCodes.codeHash, codeHash))
          .get();
        if (!used) return { kind: 'invalid' };
        // RFC 6749 §4.1.2: a code used twice revokes the tokens issued for it.
        if (used.connectionId) {
          const audit = input.reuseAudit({ accountId: used.accountId, connectionId: used.connectionId });
          this.revokeIn(tx, used.connectionId, input.now, audit);
        }
        return { kind: 'reused', connectionId: used.connectionId };
      }
      const connection = connectionFromCode(codeFromRow(r), input);
      if (!connection) return { kind: 'invalid' };
      tx.insert(schema.oauthConnections).values(connectionToRow(connection)).run();
      tx.update(schema.oauthAuthorizationCodes)
        .set({ connectionId: connection.id })
        .where(eq(schema.oauthAuthorizationCodes.codeHash, codeHash))
        .run();
      this.insertTokens(tx, connection.id, input.now, input.tokens);
      insertAudit(sqliteClientOf(tx), input.audit(connection));
      return { kind: 'issued', connection };
    });
  }

  async rotateRefreshToken(
    refreshTokenHash: string,
    input: { now: string; clientId: string; tokens: IssuedTokens; reuseAudit: (c: Connection) => AuditEventInput },
  ): Promise<RefreshOutcome> {
    return this.db.transaction((tx): RefreshOutcome => {
      const t = schema.oauthRefreshTokens;
      const c = schema.oauthConnections;
      // The decision is this conditional write: of concurrent refreshes with one token exactly one matches
      // `rotated_at IS NULL`; the others see a rotated token below and revoke the grant (RFC 9700 rotation).
      const rotated = tx
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
        .returning({ connectionId: t.connectionId })
        .get();
      if (rotated) {
        const row = tx.select().from(c).where(eq(c.id, rotated.connectionId)).get();
        if (!row) return { kind: 'invalid' };
        this.insertTokens(tx, rotated.connectionId, input.now, input.tokens);
        return { kind: 'rotated', connection: connectionFromRow(row) };
      }
      const r = tx
        .select()
        .from(t)
        .innerJoin(c, eq(t.connectionId, c.id))
        .where(eq(t.tokenHash, refreshTokenHash))
        .get();
      if (!r) return { kind: 'invalid' };
      const connection = connectionFromRow(r.oauth_connections);
      if (connection.revokedAt !== null || connection.clientId !== input.clientId) return { kind: 'invalid' };
      if (r.oauth_refresh_tokens.rotatedAt !== null) {
        // Reuse of a rotated token: either the client or a thief holds a stale copy; revoke the whole grant.
        this.revokeIn(tx, connection.id, input.now, input.reuseAudit(connection));
        return { kind: 'reused', connection: { ...connection, revokedAt: input.now } };
      }
      return { kind: 'invalid' };
    });
  }

  async findAccessToken(accessTokenHash: string, now: string): Promise<AccessTokenRecord | null> {
    const r = this.db
      .select()
      .from(schema.oauthAccessTokens)
      .innerJoin(schema.oauthConnections, eq(schema.oauthAccessTokens.connectionId, schema.oauthConnections.id))
      .where(
        and(
          eq(schema.oauthAccessTokens.tokenHash, accessTokenHash),
          gt(schema.oauthAccessTokens.expiresAt, now),
          isNull(schema.oauthConnections.revokedAt),
        ),
      )
      .get();
    return r
      ? { connection: connectionFromRow(r.oauth_connections), expiresAt: r.oauth_access_tokens.expiresAt }
      : null;
  }

  async touchConnection(id: string, at: string): Promise<void> {
    this.db.update(schema.oauthConnections).set({ lastUsedAt: at }).where(eq(schema.oauthConnections.id, id)).run();
  }

  async revokeToken(
    tokenHash: string,
    clientId: string,
    now: string,
    audit: (c: Connection) => AuditEventInput,
  ): Promise<Connection | null> {
    return this.db.transaction((tx) => {
      const access = tx
        .select()
        .from(schema.oauthAccessTokens)
        .innerJoin(schema.oauthConnections, eq(schema.oauthAccessTokens.connectionId, schema.oauthConnections.id))
        .where(eq(schema.oauthAccessTokens.tokenHash, tokenHash))
        .get();
      if (access) {
        if (access.oauth_connections.clientId === clientId) {
          tx.delete(schema.oauthAccessTokens).where(eq(schema.oauthAccessTokens.tokenHash, tokenHash)).run();
        }
        return null;
      }
      const refresh = tx
        .select()
        .from(schema.oauthRefreshTokens)
        .innerJoin(schema.oauthConnections, eq(schema.oauthRefreshTokens.connectionId, schema.oauthConnections.id))
        .where(eq(schema.oauthRefreshTokens.tokenHash, tokenHash))
        .get();
      if (!refresh || refresh.oauth_connections.clientId !== clientId) return null;
      const connection = connectionFromRow(refresh.oauth_connections);
      if (connection.revokedAt !== null) return null;
      this.revokeIn(tx, connection.id, now, audit(connection));
      return { ...connection, revokedAt: now };
    });
  }

  async getConnection(id: string): Promise<Connection | null> {
    const r = this.db.select().from(schema.oauthConnections).where(eq(schema.oauthConnections.id, id)).get();
    return r ? connectionFromRow(r) : null;
  }

  async listConnections(
    accountId: string,
    options: { userId?: string; includeRevoked?: boolean },
  ): Promise<Connection[]> {
    const conditions = [eq(schema.oauthConnections.accountId, accountId)];
    if (options.userId !== undefined) conditions.push(eq(schema.oauthConnections.userId, options.userId));
    if (!options.includeRevoked) conditions.push(isNull(schema.oauthConnections.revokedAt));
    return this.db
      .select()
      .from(schema.oauthConnections)
      .where(and(...conditions))
      .orderBy(desc(schema.oauthConnections.createdAt))
      .all()
      .map(connectionFromRow);
  }

  async revokeConnection(id: string, now: string, audit: AuditEventInput): Promise<boolean> {
    return this.db.transaction((tx) => this.revokeIn(tx, id, now, audit));
  }

  private revokeIn(tx: Tx, id: string, now: string, audit: AuditEventInput): boolean {
    const changed = tx
      .update(schema.oauthConnections)
      .set({ revokedAt: now })
      .where(and(eq(schema.oauthConnections.id, id), isNull(schema.oauthConnections.revokedAt)))
      .run();
    tx.delete(schema.oauthAccessTokens).where(eq(schema.oauthAccessTokens.connectionId, id)).run();
    tx.delete(schema.oauthRefreshTokens).where(eq(schema.oauthRefreshTokens.connectionId, id)).run();
    if (changed.changes === 1) insertAudit(sqliteClientOf(tx), audit);
    return changed.changes === 1;
  }

  private insertTokens(tx: Tx, connectionId: string, now: string, tokens: IssuedTokens): void {
    const rows = tokenRows(connectionId, now, tokens);
    tx.insert(schema.oauthAccessTokens).values(rows.access).run();
    tx.insert(schema.oauthRefreshTokens).values(rows.refresh).run();
  }
}
