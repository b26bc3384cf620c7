import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { hasPermission } from '../identity/permissions';
import type { OAuthContext } from '../oauth/oauth-deps';
import type { UserActor } from '../services/actor';
import { defineService } from '../services/define-service';
import { auditEvent, type ServiceContext } from '../services/service-context';

/**
 * Revokes a connection: its tokens stop working and its live MCP sessions close at once. People revoke their
 * own connections; revoking someone else's needs `members.manage`. Another person's connection that the caller
 * may not touch is `not_found`, like one that does not exist.
 */
export const revokeConnection = defineService({
  name: 'revokeConnection',
  input: z.object({ id: z.string().min(1).max(100) }),
  run: async (
    ctx: ServiceContext<Pick<OAuthContext, 'oauth' | 'mcp'>, UserActor>,
    input,
  ): Promise<{ revoked: true }> => {
    const user = ctx.actor.user;
    const connection = await ctx.deps.oauth.store.getConnection(input.id);
    const mayRevoke =
      connection !== null &&
      connection.accountId === user.accountId &&
      (connection.userId === user.userId || hasPermission(user, 'members.manage'));
    if (!connection || !mayRevoke || connection.revokedAt !== null) {
      throw new LetKiteError('not_found', `no connection "${input.id}"`);
    }
    await ctx.deps.oauth.store.revokeConnection(
      input.id,
      ctx.now.toISOString(),
      auditEvent(ctx, 'connection.revoke', input.id, {
        reason: 'revoked_by_person',
        client_name: connection.clientName,
      }),
    );
    await ctx.deps.mcp.closeSessionsOf(input.id);
    return { revoked: true };
  },
});
