import { LetKiteError } from '@letkite/protocol';
import { PolicyName } from '@letkite/protocol/api';
import { z } from 'zod';
import { defineService } from '../services/define-service';
import { auditEvent, type ServiceContext } from '../services/service-context';
import { accountOf } from './list-policies';
import { type PolicyDeps, refuseBuiltin } from './policy-views';

/**
 * Deletes an account policy and its revisions. Refused with `conflict` while a live API token or connection
 * names it: the error names each one and whose it is, so the owner knows whom to ask (or what to revoke).
 */
export const deletePolicy = defineService({
  name: 'policies.delete',
  input: z.object({ name: PolicyName }),
  permission: 'policies.manage',
  async run(ctx: ServiceContext<PolicyDeps>, input) {
    refuseBuiltin(input.name);
    const uses = await ctx.deps.policies.delete(
      accountOf(ctx),
      input.name,
      auditEvent(ctx, 'policy.delete', input.name),
    );
    if (uses === null) throw new LetKiteError('not_found', `no policy "${input.name}"`, { policy: input.name });
    if (uses.length > 0) {
      const named = uses.map((u) => `${u.kind === 'api_token' ? 'token' : 'connection'} "${u.label}" of ${u.userName}`);
      throw new LetKiteError('conflict', `policy "${input.name}" is in use by ${named.join(', ')}`, {
        policy: input.name,
        used_by: uses.map((u) => ({
          kind: u.kind,
          id: u.id,
          label: u.label,
          user_id: u.userId,
          user_name: u.userName,
        })),
      });
    }
    return { ok: true as const };
  },
});
