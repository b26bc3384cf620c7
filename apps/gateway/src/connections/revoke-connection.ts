import { LetKiteError } from '@letkite/protocol';
import type { SignedInUser } from '../identity/current-user';
import { hasPermission } from '../identity/permissions';
import type { OAuthContext } from '../oauth/oauth-deps';

/**
 * Revokes a connection: its tokens stop working and its live MCP sessions close at once. People revoke their
 * own connections; revoking someone else's needs `members.manage`. Another person's connection that the caller
 * may not touch is `not_found`, like one that does not exist.
 */
export async function revokeConnection(
  ctx: Pick<OAuthContext, 'oauth' | 'now' | 'mcp'>,
  user: SignedInUser,
  id: string,
): Promise<void> {
  const connection = await ctx.oauth.store.getConnection(id);
  const mayRevoke =
    connection !== null &&
    connection.accountId === user.accountId &&
    (connection.userId === user.userId || hasPermission(user, 'members.manage'));
  if (!connection || !mayRevoke || connection.revokedAt !== null) {
    throw new LetKiteError('not_found', `no connection "${id}"`);
  }
  const now = ctx.now().toISOString();
  await ctx.oauth.store.revokeConnection(id, now, {
    accountId: user.accountId,
    at: now,
    actor: `user:${user.userId}`,
    action: 'connection.revoke',
    target: id,
    outcome: 'ok',
    details: { reason: 'revoked_by_person', client_name: connection.clientName },
  });
  await ctx.mcp.closeSessionsOf(id);
}
