import { newId } from '../auth/secrets';
import { checkClientMetadata } from './client-metadata';
import type { OAuthContext } from './oauth-deps';
import { OAuthError } from './oauth-error';

/**
 * Dynamic client registration (RFC 7591). Open to anyone, as MCP clients expect: a registration grants nothing by
 * itself — every connection still needs a person's consent. Only public clients are registered; a requested
 * secret-based method is answered with `none` (RFC 7591 §3.2.1 lets the server replace values).
 */
export async function registerClient(ctx: Pick<OAuthContext, 'oauth' | 'now'>, body: unknown) {
  const checked = checkClientMetadata(body);
  if (!checked.ok) {
    const code = checked.error.startsWith('redirect') ? 'invalid_redirect_uri' : 'invalid_client_metadata';
    throw new OAuthError(code, checked.error);
  }
  const now = ctx.now();
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
