import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { newId } from '../../auth/secrets';
import { defineService } from '../../services/define-service';
import type { Group } from '../identity-store';
import { auditBy, type OpContext, requirePermission } from '../op-context';

export const SaveGroupInput = z.object({
  id: z.string().max(100).optional(),
  name: z.string().trim().min(1).max(60),
  member_ids: z.array(z.string().min(1).max(100)).max(1000),
  machine_ids: z.array(z.string().min(1).max(100)).max(1000),
});
export const DeleteGroupInput = z.object({ id: z.string().min(1).max(100) });

/** A group as the REST API answers it (`GroupView` in @letkite/protocol/api): snake_case, not the store's shape. */
export function groupView(g: Group) {
  return { id: g.id, name: g.name, member_ids: g.memberIds, machine_ids: g.machineIds, created_at: g.createdAt };
}

/**
 * Creates or edits a group: its members, and the machines it claims (then only its members, owners and admins
 * reach them). Members need `members.manage`; changing the claimed machines also needs `machines.manage`.
 */
export const saveGroup = defineService({
  name: 'saveGroup',
  input: SaveGroupInput,
  permission: 'members.manage',
  run: async (ctx: OpContext, input) => {
    const accountId = ctx.actor.user.accountId;
    const existing = input.id ? await ctx.deps.identity.getGroup(accountId, input.id) : null;
    if (input.id && !existing) throw new LetKiteError('not_found', `no group "${input.id}"`);
    const machineIds = [...new Set(input.machine_ids)].sort();
    if (machineIds.join() !== [...(existing?.machineIds ?? [])].sort().join()) {
      requirePermission(ctx.actor.user, 'machines.manage');
    }
    const members = new Set((await ctx.deps.identity.listMembers(accountId)).map((m) => m.user.id));
    const strangers = input.member_ids.filter((id) => !members.has(id));
    if (strangers.length > 0) throw new LetKiteError('not_found', `not members: ${strangers.join(', ')}`);
    const machines = new Set((await ctx.deps.store.listMachines(accountId)).map((m) => m.id));
    const unknown = machineIds.filter((id) => !machines.has(id));
    if (unknown.length > 0) throw new LetKiteError('machine_not_found', `no machines ${unknown.join(', ')}`);
    const clash = (await ctx.deps.identity.listGroups(accountId)).find(
      (g) => g.name.toLowerCase() === input.name.toLowerCase() && g.id !== input.id,
    );
    if (clash) throw new LetKiteError('conflict', `a group named "${input.name}" exists`);
    const group = {
      id: existing?.id ?? newId('grp'),
      accountId,
      name: input.name,
      createdAt: existing?.createdAt ?? ctx.now.toISOString(),
      memberIds: [...new Set(input.member_ids)],
      machineIds,
    };
    await ctx.deps.identity.saveGroup(
      group,
      auditBy(ctx, existing ? 'group.update' : 'group.create', group.id, {
        name: group.name,
        members: group.memberIds,
        machines: group.machineIds,
      }),
    );
    return groupView(group);
  },
});

/** Deletes a group; the machines it claimed become reachable by every member again. */
export const deleteGroup = defineService({
  name: 'deleteGroup',
  input: DeleteGroupInput,
  permission: 'members.manage',
  run: async (ctx: OpContext, input) => {
    requirePermission(ctx.actor.user, 'machines.manage');
    const ok = await ctx.deps.identity.deleteGroup(
      ctx.actor.user.accountId,
      input.id,
      auditBy(ctx, 'group.delete', input.id),
    );
    if (!ok) throw new LetKiteError('not_found', `no group "${input.id}"`);
  },
});
