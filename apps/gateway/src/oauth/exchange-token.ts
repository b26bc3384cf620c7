import { hashSecret, newId } from '../auth/secrets';
import type { OAuthContext } from './oauth-deps';
import { OAuthError } from './oauth-error';
import { verifyPkce } from './pkce';
import { formatScope } from './scopes';
import { mcpResource, newTokenPair, tokenResponse } from './tokens';

/** The form fields of a token request (application/x-www-form-urlencoded). */
export type TokenRequest = Record<string, string | undefined>;

/**
 * The token endpoint (OAuth 2.1 §3.2): `authorization_code` with its PKCE verifier, and `refresh_token` with
 * rotation. Clients are public, so `client_id` identifies the client and PKCE (or possession of the refresh
 * token) proves it; a client that tries HTTP Basic with a secret has none to offer here.
 */
export async function exchangeToken(
  ctx: Pick<OAuthContext, 'oauth' | 'now' | 'publicUrl' | 'mcp' | 'log'>,
  form: TokenRequest,
  authorization: string | undefined,
): Promise<ReturnType<typeof tokenResponse>> {
  if (authorization !== undefined) {
    throw new OAuthError('invalid_client', 'this server has only public clients: send client_id, no credentials');
  }
  const clientId = form.client_id;
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required');
  const resource = mcpResource(ctx.publicUrl);
  if (form.resource !== undefined && form.resource !== resource) {
    throw new OAuthError('invalid_target', `resource must be ${resource}`);
  }
  switch (form.grant_type) {
    case 'authorization_code':
      return redeemCode(ctx, clientId, form);
    case 'refresh_token':
      return refresh(ctx, clientId, form);
    default:
      throw new OAuthError('unsupported_grant_type', `grant_type "${form.grant_type ?? ''}" is not supported`);
  }
}

async function redeemCode(ctx: Pick<OAuthContext, 'oauth' | 'now' | 'mcp'>, clientId: string, form: TokenRequest) {
  if (!form.code) throw new OAuthError('invalid_request', 'code is required');
  if (!form.code_verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
  const now = ctx.now();
  const pair = newTokenPair(now);
  const connectionId = newId('con');
  const outcome = await ctx.oauth.store.redeemAuthorizationCode(hashSecret(form.code), {
    now: now.toISOString(),
    connectionId,
    check: (code) =>
      code.clientId === clientId &&
      // OAuth 2.1 §4.1.3: the redirect_uri must repeat the one of the authorization request when it was sent.
      (form.redirect_uri === undefined || form.redirect_uri === code.redirectUri) &&
      verifyPkce(form.code_verifier, code.codeChallenge),
    tokens: pair.stored,
    audit: (c) => ({
      accountId: c.accountId,
      at: now.toISOString(),
      actor: `user:${c.userId}`,
      action: 'connection.create',
      target: c.id,
      outcome: 'ok',
      details: { client_id: c.clientId, client_name: c.clientName, scope: formatScope(c.groups), grant: c.grant },
    }),
    reuseAudit: ({ accountId, connectionId: revoked }) => ({
      accountId,
      at: now.toISOString(),
      actor: `client:${clientId}`,
      action: 'connection.revoke',
      target: revoked,
      outcome: 'ok',
      details: { reason: 'authorization_code_reused' },
    }),
  });
  if (outcome.kind === 'reused') {
    if (outcome.connectionId) await ctx.mcp.closeSessionsOf(outcome.connectionId);
    throw new OAuthError('invalid_grant', 'the authorization code was already used; its connection is revoked');
  }
  if (outcome.kind === 'invalid') {
    throw new OAuthError('invalid_grant', 'the code is unknown or expired, or client, redirect URI or verifier differ');
  }
  return tokenResponse(pair, formatScope(outcome.connection.groups));
}

async function refresh(ctx: Pick<OAuthContext, 'oauth' | 'now' | 'mcp'>, clientId: string, form: TokenRequest) {
  if (!form.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required');
  const now = ctx.now();
  const pair = newTokenPair(now);
  const outcome = await ctx.oauth.store.rotateRefreshToken(hashSecret(form.refresh_token), {
    now: now.toISOString(),
    clientId,
    tokens: pair.stored,
    reuseAudit: (c) => ({
      accountId: c.accountId,
      at: now.toISOString(),
      actor: `client:${clientId}`,
      action: 'connection.revoke',
      target: c.id,
      outcome: 'ok',
      details: { reason: 'refresh_token_reused' },
    }),
  });
  if (outcome.kind === 'reused') {
    await ctx.mcp.closeSessionsOf(outcome.connection.id);
    throw new OAuthError('invalid_grant', 'the refresh token was already used; the connection is revoked');
  }
  if (outcome.kind === 'invalid')
    throw new OAuthError('invalid_grant', 'the refresh token is unknown, expired or revoked');
  // The scopes are the person's choice at consent: a `scope` asked for on refresh widens nothing (RFC 6749 §6).
  return tokenResponse(pair, formatScope(outcome.connection.groups));
}
