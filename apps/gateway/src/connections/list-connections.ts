import { z } from 'zod';
import { seesEveryMachine } from '../identity/permissions';
import type { OAuthContext } from '../oauth/oauth-deps';
import { redirectTarget } from '../oauth/redirect-uri';
import { formatScope } from '../oauth/scopes';
import type { UserActor } from '../services/actor';
import { defineService } from '../services/define-service';
import type { ServiceContext } from '../services/service-context';

/** A connection as the web app's connections page shows it. */
export interface ConnectionView {
  id: string;
  user_id: string;
  user_name: string | null;
  client_id: string;
  /** As declared by the client. */
  client_name: string | null;
  redirect_host: string;
  scope: string;
  machines: '*' | string[];
  policy: string | Record<string, unknown>;
  created_at: string;
  last_used_at: string | null;
}

/** What listing connections needs. */
export type ConnectionsContext = ServiceContext<Pick<OAuthContext, 'oauth' | 'store'>, UserActor>;

/** Lists live connections: owners and admins see the account's, everyone else their own. */
export const listConnections = defineService({
  name: 'listConnections',
  input: z.object({}),
  run: async (ctx: ConnectionsContext): Promise<{ connections: ConnectionView[] }> => {
    const user = ctx.actor.user;
    const connections = await ctx.deps.oauth.store.listConnections(
      user.accountId,
      seesEveryMachine(user.role) ? {} : { userId: user.userId },
    );
    const names = new Map<string, string | null>();
    for (const c of connections) {
      if (!names.has(c.userId)) names.set(c.userId, (await ctx.deps.store.getUser(c.userId))?.name ?? null);
    }
    return {
      connections: connections.map((c) => ({
        id: c.id,
        user_id: c.userId,
        user_name: names.get(c.userId) ?? null,
        client_id: c.clientId,
        client_name: c.clientName,
        redirect_host: redirectTarget(c.redirectUri),
        scope: formatScope(c.groups),
        machines: c.grant.machines,
        policy: c.grant.policy,
        created_at: c.createdAt,
        last_used_at: c.lastUsedAt,
      })),
    };
  },
});
