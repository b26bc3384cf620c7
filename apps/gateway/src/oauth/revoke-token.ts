import { hashSecret } from '../auth/secrets';
import type { OAuthContext } from './oauth-deps';
import { OAuthError } from './oauth-error';

/**
 * Token revocation (RFC 7009). Revoking a refresh token revokes its whole connection and closes the connection's
 * live MCP sessions; revoking an access token forgets that token. Unknown tokens are answered like known ones
 * (§2.2), so the endpoint tells nothing about which tokens exist.
 */
export async function revokeToken(
  ctx: Pick<OAuthContext, 'oauth' | 'now' | 'mcp'>,
  form: Record<string, string | undefined>,
): Promise<void> {
  if (!form.token) throw new OAuthError('invalid_request', 'token is required');
  if (!form.client_id) throw new OAuthError('invalid_client', 'client_id is required');
  const clientId = form.client_id;
  const now = ctx.now().toISOString();
  const revoked = await ctx.oauth.store.revokeToken(hashSecret(form.token), clientId, now, (c) => ({
    accountId: c.accountId,
    at: now,
    actor: `client:${clientId}`,
    action: 'connection.revoke',
    target: c.id,
    outcome: 'ok',
    details: { reason: 'revoked_by_client' },
  }));
  if (revoked) await ctx.mcp.closeSessionsOf(revoked.id);
}
