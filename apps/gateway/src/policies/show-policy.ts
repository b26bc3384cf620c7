import { LetKiteError } from '@letkite/protocol';
import { PolicyName } from '@letkite/protocol/api';
import { z } from 'zod';
import { isBuiltinPolicyName } from '../policy/resolve-policy';
import { defineService } from '../services/define-service';
import type { ServiceContext } from '../services/service-context';
import { accountOf } from './list-policies';
import { builtinView, type PolicyDeps, revisionView, storedOrNotFound, storedView } from './policy-views';

/** One policy with every revision (newest first) and the live tokens and connections that use it. */
export const showPolicy = defineService({
  name: 'policies.show',
  input: z.object({ name: PolicyName }),
  permission: 'clients.connect',
  async run(ctx: ServiceContext<PolicyDeps>, input) {
    const account = accountOf(ctx);
    if (isBuiltinPolicyName(input.name)) {
      const view = builtinView(input.name);
      return { policy: view, versions: [view], used_by: [] };
    }
    const stored = await storedOrNotFound(ctx.deps, account, input.name);
    const [versions, uses] = await Promise.all([
      ctx.deps.policies.versions(account, input.name),
      ctx.deps.policies.usesOf(account, input.name, ctx.now.toISOString()),
    ]);
    return {
      policy: storedView(stored),
      versions: versions.map(revisionView),
      used_by: uses.map((u) => ({ kind: u.kind, id: u.id, label: u.label, user_id: u.userId, user_name: u.userName })),
    };
  },
});

/** One revision of a policy (built-ins have only version 0). */
export const showPolicyVersion = defineService({
  name: 'policies.version',
  input: z.object({ name: PolicyName, version: z.coerce.number().int().nonnegative() }),
  permission: 'clients.connect',
  async run(ctx: ServiceContext<PolicyDeps>, input) {
    if (isBuiltinPolicyName(input.name)) {
      if (input.version === 0) return builtinView(input.name);
    } else {
      const r = await ctx.deps.policies.version(accountOf(ctx), input.name, input.version);
      if (r) return revisionView(r);
    }
    throw new LetKiteError('not_found', `policy "${input.name}" has no version ${input.version}`, {
      policy: input.name,
      version: input.version,
    });
  },
});
