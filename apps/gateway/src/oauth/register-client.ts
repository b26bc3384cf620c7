import { newId } from '../auth/secrets';
import type { LimiterOptions } from '../coordination/coordination';
import { checkClientMetadata } from './client-metadata';
import type { OAuthContext } from './oauth-deps';
import { OAuthError } from './oauth-error';

/** Registrations per client address an hour, unless configured: every MCP client a person tries, not a flood. */
export const DEFAULT_REGISTRATIONS_PER_HOUR = 20;
/** A registration never used (no authorization code issued for it) within this long is deleted. */
export const UNUSED_CLIENT_TTL_MS = 24 * 3_600_000;

/**
 * Dynamic client registration (RFC 7591). Open to anyone, as MCP clients expect: a registration grants nothing by
 * itself — every connection still needs a person's consent. Only public clients are registered; a requested
 * secret-based method is answered with `none` (RFC 7591 §3.2.1 lets the server replace values). Being open, it is
 * limited per client address (`registrationsPerHour`, shared by every gateway), and registrations nobody used
 * are pruned after UNUSED_CLIENT_TTL_MS (`pruneUnusedClients`).
 */
export async function registerClient(
  ctx: Pick<OAuthContext, 'oauth' | 'now' | 'coordination'>,
  body: unknown,
  clientAddress: string,
) {
  const checked = checkClientMetadata(body);
  if (!checked.ok) {
    const code = checked.error.startsWith('redirect') ? 'invalid_redirect_uri' : 'invalid_client_metadata';
    throw new OAuthError(code, checked.error);
  }
  const now = ctx.now();
  // Counted after the metadata check, so a client fixing its request is not slowed by its own mistakes.
  const perHour: LimiterOptions = {
    limit: ctx.oauth.registrationsPerHour ?? DEFAULT_REGISTRATIONS_PER_HOUR,
    windowMs: 3_600_000,
  };
  const limit = await ctx.coordination.limiter('oauth.register', perHour).hit(clientAddress, now.getTime());
  if (!limit.allowed) {
    const retryAfterS = Math.max(1, Math.ceil(limit.retryAfterMs / 1000));
    throw new OAuthError(
      'rate_limited',
      `too many client registrations from this address; try again in ${retryAfterS} s`,
      429,
      retryAfterS,
    );
  }
  const clientId = newId('lkcl');
  await ctx.oauth.store.registerClient({ clientId, metadata: checked.metadata, createdAt: now.toISOString() });
  const m = checked.metadata;
  return {
    client_id: clientId,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    redirect_uris: m.redirect_uris,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...(m.client_name === undefined ? {} : { client_name: m.client_name }),
    ...(m.client_uri === undefined ? {} : { client_uri: m.client_uri }),
    ...(m.logo_uri === undefined ? {} : { logo_uri: m.logo_uri }),
    ...(m.software_id === undefined ? {} : { software_id: m.software_id }),
    ...(m.software_version === undefined ? {} : { software_version: m.software_version }),
  };
}

/** Deletes registrations older than UNUSED_CLIENT_TTL_MS that were never used; run by one gateway (main.ts). */
export function pruneUnusedClients(ctx: Pick<OAuthContext, 'oauth' | 'now'>): Promise<number> {
  return ctx.oauth.store.pruneUnusedClients(new Date(ctx.now().getTime() - UNUSED_CLIENT_TTL_MS).toISOString());
}
