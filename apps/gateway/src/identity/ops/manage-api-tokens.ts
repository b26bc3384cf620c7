import { builtinPolicies, toolNames } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { createApiToken } from '../../auth/create-api-token';
import { parseDuration } from '../../auth/duration';
import { reachableMachines } from '../../machines/resolve-machine';
import { auditBy, type OpContext, parseInput, requirePermission } from '../op-context';

export const CreateApiTokenInput = z.object({
  name: z.string().trim().min(1).max(100),
  policy: z.enum(Object.keys(builtinPolicies) as [string, ...string[]]).default('read-only'),
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
export async function createWebApiToken(ctx: OpContext, raw: unknown) {
  requirePermission(ctx.user, 'clients.connect');
  const input = parseInput(CreateApiTokenInput, raw);
  if (input.machines !== '*') {
    const reach = new Set((await reachableMachines(ctx.deps, ctx.user)).map((m) => m.id));
    const beyond = input.machines.filter((m) => !reach.has(m));
    if (beyond.length > 0) throw new LetKiteError('machine_not_found', `no machines ${beyond.join(', ')}`);
  }
  const created = await createApiToken(
    { store: ctx.deps.store, now: ctx.now },
    {
      accountId: ctx.user.accountId,
      userId: ctx.user.userId,
      name: input.name,
      grant: { policy: input.policy, machines: input.machines, scopes: input.scopes },
      ...(input.expires ? { expiresInMs: parseDuration(input.expires) } : {}),
      actor: `user:${ctx.user.userId}`,
    },
  );
  return { id: created.id, token: created.token, expires_at: created.expiresAt };
}

/**
 * Revokes an API token — one's own, or anyone's with `members.manage` — and closes the MCP sessions opened with it.
 */
export async function revokeWebApiToken(ctx: OpContext, raw: unknown) {
  const input = parseInput(RevokeApiTokenInput, raw);
  const token = (await ctx.deps.identity.listApiTokens(ctx.user.accountId, null)).find((t) => t.id === input.id);
  if (!token) throw new LetKiteError('not_found', `no token "${input.id}"`);
  if (token.userId !== ctx.user.userId) requirePermission(ctx.user, 'members.manage');
  const ok = await ctx.deps.identity.revokeApiToken(
    ctx.user.accountId,
    input.id,
    ctx.now.toISOString(),
    auditBy(ctx, 'api_token.revoke', input.id, { name: token.name }),
  );
  if (!ok) throw new LetKiteError('not_found', `token "${input.id}" is already revoked`);
  await ctx.deps.mcp.closeSessionsOf(input.id);
}
