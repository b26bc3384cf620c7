import { hashSecret, newSecret } from '../auth/secrets';
import type { IssuedTokens } from './oauth-store';

/** Access tokens live 15 minutes: revocation is immediate anyway, expiry bounds a copy that leaked unnoticed. */
export const ACCESS_TOKEN_TTL_MS = 15 * 60_000;
/** A refresh token is good for 30 days without use; each use rotates it. */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3_600_000;
/** Authorization codes are used at once by the client's redirect handler. */
export const AUTHORIZATION_CODE_TTL_MS = 2 * 60_000;

/** The OAuth resource (the tokens' audience) of a gateway: its MCP endpoint. */
export function mcpResource(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/mcp`;
}

/** The authorization server's issuer identifier: the public URL without a trailing slash. */
export function issuerOf(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '');
}

/** A fresh access and refresh token pair, and what the store keeps of them (hashes and expiry). */
export function newTokenPair(now: Date): { accessToken: string; refreshToken: string; stored: IssuedTokens } {
  const accessToken = newSecret('lka_');
  const refreshToken = newSecret('lkr_');
  return {
    accessToken,
    refreshToken,
    stored: {
      accessTokenHash: hashSecret(accessToken),
      accessExpiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL_MS).toISOString(),
      refreshTokenHash: hashSecret(refreshToken),
      refreshExpiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS).toISOString(),
    },
  };
}

/** The token endpoint's success body (RFC 6749 §5.1). */
export function tokenResponse(pair: { accessToken: string; refreshToken: string }, scope: string) {
  return {
    access_token: pair.accessToken,
    token_type: 'Bearer' as const,
    expires_in: ACCESS_TOKEN_TTL_MS / 1000,
    refresh_token: pair.refreshToken,
    scope,
  };
}
