import { LetKiteError } from '@letkite/protocol';
import { MachineName, type RenameMachineResponse } from '@letkite/protocol/api';
import { z } from 'zod';
import { actorLabel } from '../services/actor';
import { defineService } from '../services/define-service';
import type { ServiceContext } from '../services/service-context';
import type { Store } from '../store/types';

/** The rename's input: the machine (path parameter on REST, argument on the CLI) and its new name. */
export const RenameMachineInput = z.object({ id: z.string().min(1).max(200), name: MachineName }).strict();

/**
 * Renames a machine of the actor's account (`machines.manage`: owners and admins hold it; a custom role may). The
 * name must be valid and unused in the account (letter case aside); the store checks that and writes the
 * `machine.rename` audit event in one transaction, so two renames racing to one name cannot both win. AIs see the
 * new name at their next `machines_list`; calls by the old name answer `machine_not_found`.
 */
export const renameMachine = defineService({
  name: 'renameMachine',
  input: RenameMachineInput,
  permission: 'machines.manage',
  run: async (ctx: ServiceContext<{ store: Store }>, input): Promise<RenameMachineResponse> => {
    if (ctx.account === null) throw new LetKiteError('forbidden', 'renaming a machine needs an account');
    const r = await ctx.deps.store.renameMachine(ctx.account, input.id, input.name, {
      accountId: ctx.account,
      at: ctx.now.toISOString(),
      actor: actorLabel(ctx.actor),
      action: 'machine.rename',
      target: input.id,
      outcome: 'ok',
    });
    if (!r.ok && r.reason === 'not_found') throw new LetKiteError('machine_not_found', `no machine "${input.id}"`);
    if (!r.ok)
      throw new LetKiteError('conflict', `another machine in this account is already named "${input.name}"`, {
        name: input.name,
      });
    return { id: input.id, name: input.name, previous_name: r.previousName };
  },
});
