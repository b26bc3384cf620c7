import { invalidDocument, type Policy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import { CreatePolicyRequest, PolicyName, UpdatePolicyRequest } from '@letkite/protocol/api';
import { actorLabel } from '../services/actor';
import { defineService } from '../services/define-service';
import { auditEvent, type ServiceContext } from '../services/service-context';
import { accountOf } from './list-policies';
import { type PolicyDeps, refuseBuiltin, storedOrNotFound, storedView } from './policy-views';
import { checkPolicySource } from './validate-policy';

/** Parses a document for saving, or `invalid_params` listing every problem with its line (details.issues). */
function policyToSave(source: string): Policy {
  const checked = checkPolicySource(source);
  if (checked.policy === null) throw invalidDocument('policy', checked.issues);
  return checked.policy;
}

/** Creates an account policy from TOML; its name is the document's `name`. Version 1. */
export const createPolicy = defineService({
  name: 'policies.create',
  input: CreatePolicyRequest,
  permission: 'policies.manage',
  async run(ctx: ServiceContext<PolicyDeps>, input) {
    const account = accountOf(ctx);
    const policy = policyToSave(input.source);
    const created = await ctx.deps.policies.create(
      account,
      {
        name: policy.name,
        source: input.source,
        parsed: policy as unknown as Record<string, unknown>,
        author: actorLabel(ctx.actor),
        at: ctx.now.toISOString(),
      },
      auditEvent(ctx, 'policy.create', policy.name, { source: input.source }),
    );
    if (!created) {
      throw new LetKiteError('conflict', `a policy named "${policy.name}" already exists`, { policy: policy.name });
    }
    return { policy: storedView(await storedOrNotFound(ctx.deps, account, policy.name)) };
  },
});

/**
 * Saves a new revision of an account policy. The next call of every connection and token that uses it is judged
 * by the new revision, and approvals made under an earlier one no longer match (they ask again).
 */
export const updatePolicy = defineService({
  name: 'policies.update',
  input: UpdatePolicyRequest.extend({ name: PolicyName }),
  permission: 'policies.manage',
  async run(ctx: ServiceContext<PolicyDeps>, input) {
    const account = accountOf(ctx);
    refuseBuiltin(input.name);
    const policy = policyToSave(input.source);
    if (policy.name !== input.name) {
      // Renaming would silently cut every grant that names the policy: it is a new policy instead.
      throw new LetKiteError(
        'invalid_params',
        `the document's name "${policy.name}" is not "${input.name}"; create a new policy to rename`,
        { issues: [{ path: 'name', message: `must be "${input.name}"` }] },
      );
    }
    const previous = await storedOrNotFound(ctx.deps, account, input.name);
    const version = await ctx.deps.policies.update(
      account,
      {
        name: input.name,
        source: input.source,
        parsed: policy as unknown as Record<string, unknown>,
        author: actorLabel(ctx.actor),
        at: ctx.now.toISOString(),
      },
      input.version,
      auditEvent(ctx, 'policy.update', input.name, { source: input.source, previous_version: previous.version }),
    );
    if (version === null) {
      const current = await ctx.deps.policies.get(account, input.name);
      if (!current) throw new LetKiteError('not_found', `no policy "${input.name}"`, { policy: input.name });
      throw new LetKiteError(
        'conflict',
        `policy "${input.name}" is at version ${current.version}, not ${input.version}: someone saved it meanwhile`,
        { policy: input.name, version: current.version },
      );
    }
    return { policy: storedView(await storedOrNotFound(ctx.deps, account, input.name)) };
  },
});
