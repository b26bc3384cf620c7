import type { AuditEventInput, Grant } from '../store/types';
import type { ToolGroup } from './scopes';

/**
 * The OAuth domain: registered clients, authorization codes, connections (the grants people give AI clients)
 * and their access and refresh tokens. Secrets (codes, tokens) are stored only as SHA-256 hashes.
 */

/** What a client says about itself (RFC 7591 metadata, or a client-ID metadata document). Never verified. */
export interface ClientMetadata {
  client_name?: string | undefined;
  client_uri?: string | undefined;
  logo_uri?: string | undefined;
  redirect_uris: string[];
  software_id?: string | undefined;
  software_version?: string | undefined;
}

export interface RegisteredClient {
  clientId: string;
  metadata: ClientMetadata;
  createdAt: string;
}

export interface AuthorizationCode {
  accountId: string;
  userId: string;
  clientId: string;
  clientName: string | null;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  groups: ToolGroup[];
  grant: Grant;
  createdAt: string;
  expiresAt: string;
}

export interface Connection {
  id: string;
  accountId: string;
  userId: string;
  clientId: string;
  /** As declared by the client at consent time. */
  clientName: string | null;
  redirectUri: string;
  /** The audience of its tokens: this gateway's `/mcp` URL. */
  resource: string;
  groups: ToolGroup[];
  grant: Grant;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface AccessTokenRecord {
  connection: Connection;
  expiresAt: string;
}

export interface IssuedTokens {
  accessTokenHash: string;
  accessExpiresAt: string;
  refreshTokenHash: string;
  refreshExpiresAt: string;
}

/** Outcome of presenting a refresh token. */
export type RefreshOutcome =
  | { kind: 'rotated'; connection: Connection }
  /** The token was already rotated: someone replayed it, so the whole connection was revoked. */
  | { kind: 'reused'; connection: Connection }
  | { kind: 'invalid' };

/** Outcome of presenting an authorization code. */
export type CodeOutcome =
  | { kind: 'issued'; connection: Connection }
  /** The code was already used: the connection it created was revoked. */
  | { kind: 'reused'; connectionId: string | null }
  | { kind: 'invalid' };

export interface OAuthStore {
  registerClient(client: RegisteredClient): Promise<void>;
  getClient(clientId: string): Promise<RegisteredClient | null>;
  /**
   * Deletes dynamically registered clients created before `createdBefore` that were never used (no authorization
   * code was ever issued to them, no connection exists); returns how many.
   */
  pruneUnusedClients(createdBefore: string): Promise<number>;

  createAuthorizationCode(codeHash: string, code: AuthorizationCode, audit: AuditEventInput): Promise<void>;
  /**
   * Atomically uses the code and creates the connection with its first tokens, once `check` (client, redirect,
   * PKCE, resource) accepts the stored code. A code presented a second time revokes what it created.
   */
  redeemAuthorizationCode(
    codeHash: string,
    input: {
      now: string;
      connectionId: string;
      check: (code: AuthorizationCode) => boolean;
      tokens: IssuedTokens;
      audit: (connection: Connection) => AuditEventInput;
      reuseAudit: (code: { accountId: string; connectionId: string }) => AuditEventInput;
    },
  ): Promise<CodeOutcome>;

  /** Rotates a refresh token of `clientId`: the old one stops working, the new pair is stored. */
  rotateRefreshToken(
    refreshTokenHash: string,
    input: { now: string; clientId: string; tokens: IssuedTokens; reuseAudit: (c: Connection) => AuditEventInput },
  ): Promise<RefreshOutcome>;

  /** The live connection behind an access token; null when unknown, expired, or its connection is revoked. */
  findAccessToken(accessTokenHash: string, now: string): Promise<AccessTokenRecord | null>;
  touchConnection(id: string, at: string): Promise<void>;

  /**
   * RFC 7009: forgets an access token, or revokes the connection a refresh token belongs to. Returns the revoked
   * connection when there was one, so its live sessions can be closed.
   */
  revokeToken(
    tokenHash: string,
    clientId: string,
    now: string,
    audit: (c: Connection) => AuditEventInput,
  ): Promise<Connection | null>;

  getConnection(id: string): Promise<Connection | null>;
  listConnections(accountId: string, options: { userId?: string; includeRevoked?: boolean }): Promise<Connection[]>;
  /** Marks a connection revoked and drops its tokens; false if it was already revoked or does not exist. */
  revokeConnection(id: string, now: string, audit: AuditEventInput): Promise<boolean>;
}
