import { toolNames } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { createApiToken } from '../../auth/create-api-token';
import { parseDuration } from '../../auth/duration';
import { reachableMachines } from '../../machines/resolve-machine';
import { groupOfTool } from '../../oauth/scopes';
import { choosablePolicies, choosePolicy } from '../../policies/choosable-policies';
import { actorLabel } from '../../services/actor';
import { defineService } from '../../services/define-service';
import { auditBy, type OpContext, requirePermission } from '../op-context';

export const CreateApiTokenInput = z.object({
  name: z.string().trim().min(1).max(100),
  /** A built-in or account policy by name; the grant stores the name, so an edit applies to the next call. */
  policy: z.string().min(1).max(100).default('read-only'),
  machines: z.union([z.literal('*'), z.array(z.string().min(1).max(100)).min(1).max(1000)]).default('*'),
  scopes: z.union([z.literal('*'), z.array(z.enum(toolNames)).min(1)]).default('*'),
  /** `30d`, `12h` …; none means until revoked. */
  expires: z.string().max(10).nullish(),
});
export const RevokeApiTokenInput = z.object({ id: z.string().min(1).max(100) });

/**
 * Creates an API token for the signed-in person (needs `clients.connect`). Its grant never reaches beyond them:
 * named machines must be ones they reach now, and `*` is re-checked against their reach on every call.
 */
export const createWebApiToken = defineService({
  name: 'createWebApiToken',
  input: CreateApiTokenInput,
  permission: 'clients.connect',
  run: async (ctx: OpContext, input) => {
    const policy = choosePolicy(await choosablePolicies(ctx.deps.policies, ctx.actor.user.accountId), input.policy);
    if (input.scopes !== '*') {
      // Only tools whose group the chosen policy can use (and the account allows); base tools have no group.
      const unusable = input.scopes.filter((t) => {
        const g = groupOfTool(t);
        return g !== null && !policy.toolGroups.includes(g);
      });
      if (unusable.length > 0) {
        throw new LetKiteError('invalid_params', `policy "${policy.name}" cannot use ${unusable.join(', ')}`, {
          policy: policy.name,
          tools: unusable,
        });
      }
    }
    if (input.machines !== '*') {
      const reach = new Set((await reachableMachines(ctx.deps, ctx.actor.user)).map((m) => m.id));
      const beyond = input.machines.filter((m) => !reach.has(m));
      if (beyond.length > 0) throw new LetKiteError('machine_not_found', `no machines ${beyond.join(', ')}`);
    }
    const created = await createApiToken(
      { store: ctx.deps.store, now: ctx.now },
      {
        accountId: ctx.actor.user.accountId,
        userId: ctx.actor.user.userId,
        name: input.name,
        grant: { policy: input.policy, machines: input.machines, scopes: input.scopes },
        ...(input.expires ? { expiresInMs: parseDuration(input.expires) } : {}),
        actor: actorLabel(ctx.actor),
      },
    );
    return { id: created.id, token: created.token, expires_at: created.expiresAt };
  },
});

/**
 * Revokes an API token — one's own, or anyone's with `members.manage` — and closes the MCP sessions opened with it.
 */
export const revokeWebApiToken = defineService({
  name: 'revokeWebApiToken',
  input: RevokeApiTokenInput,
  run: async (ctx: OpContext, input) => {
    const token = (await ctx.deps.identity.listApiTokens(ctx.actor.user.accountId, null)).find(
      (t) => t.id === input.id,
    );
    if (!token) throw new LetKiteError('not_found', `no token "${input.id}"`);
    if (token.userId !== ctx.actor.user.userId) requirePermission(ctx.actor.user, 'members.manage');
    const ok = await ctx.deps.identity.revokeApiToken(
      ctx.actor.user.accountId,
      input.id,
      ctx.now.toISOString(),
      auditBy(ctx, 'api_token.revoke', input.id, { name: token.name }),
    );
    if (!ok) throw new LetKiteError('not_found', `token "${input.id}" is already revoked`);
    await ctx.deps.mcp.closeSessionsOf(input.id);
  },
});
