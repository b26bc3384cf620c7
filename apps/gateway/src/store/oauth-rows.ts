import type { AuthorizationCode, Connection, IssuedTokens, RegisteredClient } from '../oauth/oauth-store';
import type { ToolGroup } from '../oauth/scopes';
import type { Grant } from './types';

/**
 * The OAuth domain's rows as both dialects read and write them (store/sqlite and store/postgres oauth-schema.ts
 * are twins, held by the drift test): JSON kept as text. The SQL, transactions and the conditional writes that
 * decide redemption, rotation and revocation stay in each dialect's store.
 */

/** An `oauth_clients` row. */
export interface ClientRow {
  clientId: string;
  metadata: string;
  createdAt: string;
}

/** An `oauth_connections` row. */
export interface ConnectionRow extends Omit<Connection, 'groups' | 'grant'> {
  groups: string;
  grant: string;
}

/** An `oauth_authorization_codes` row as written; `usedAt` and `connectionId` are set by its redemption. */
export interface AuthorizationCodeRow extends Omit<AuthorizationCode, 'groups' | 'grant'> {
  codeHash: string;
  groups: string;
  grant: string;
}

/** An `oauth_access_tokens` or `oauth_refresh_tokens` row as a grant or rotation writes it. */
export interface TokenRow {
  tokenHash: string;
  connectionId: string;
  createdAt: string;
  expiresAt: string;
}

export function clientToRow(c: RegisteredClient): ClientRow {
  return { clientId: c.clientId, metadata: JSON.stringify(c.metadata), createdAt: c.createdAt };
}

export function clientFromRow(r: ClientRow): RegisteredClient {
  return { clientId: r.clientId, metadata: JSON.parse(r.metadata), createdAt: r.createdAt };
}

export function connectionFromRow(r: ConnectionRow): Connection {
  return {
    ...r,
    groups: JSON.parse(r.groups) as ToolGroup[],
    grant: JSON.parse(r.grant) as Grant,
  };
}

export function connectionToRow(c: Connection): ConnectionRow {
  return { ...c, groups: JSON.stringify(c.groups), grant: JSON.stringify(c.grant) };
}

export function codeToRow(codeHash: string, code: AuthorizationCode): AuthorizationCodeRow {
  return { ...code, codeHash, groups: JSON.stringify(code.groups), grant: JSON.stringify(code.grant) };
}

export function codeFromRow(r: AuthorizationCodeRow): AuthorizationCode {
  return {
    accountId: r.accountId,
    userId: r.userId,
    clientId: r.clientId,
    clientName: r.clientName,
    redirectUri: r.redirectUri,
    codeChallenge: r.codeChallenge,
    resource: r.resource,
    groups: JSON.parse(r.groups) as ToolGroup[],
    grant: JSON.parse(r.grant) as Grant,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
  };
}

/**
 * The connection a redeemed code makes, or null when the code may not make one: expired at `now`, or refused by
 * `check` (the client, redirect URI and PKCE verifier of the token request).
 */
export function connectionFromCode(
  code: AuthorizationCode,
  input: { connectionId: string; now: string; check: (code: AuthorizationCode) => boolean },
): Connection | null {
  if (code.expiresAt <= input.now || !input.check(code)) return null;
  return {
    id: input.connectionId,
    accountId: code.accountId,
    userId: code.userId,
    clientId: code.clientId,
    clientName: code.clientName,
    redirectUri: code.redirectUri,
    resource: code.resource,
    groups: code.groups,
    grant: code.grant,
    createdAt: input.now,
    lastUsedAt: null,
    revokedAt: null,
  };
}

/** The access and refresh token rows of one issue (a grant or a rotation) for `connectionId` at `now`. */
export function tokenRows(
  connectionId: string,
  now: string,
  tokens: IssuedTokens,
): { access: TokenRow; refresh: TokenRow } {
  return {
    access: { tokenHash: tokens.accessTokenHash, connectionId, createdAt: now, expiresAt: tokens.accessExpiresAt },
    refresh: { tokenHash: tokens.refreshTokenHash, connectionId, createdAt: now, expiresAt: tokens.refreshExpiresAt },
  };
}
