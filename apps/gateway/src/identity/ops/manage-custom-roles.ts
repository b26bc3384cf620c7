import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { newId } from '../../auth/secrets';
import { defineService } from '../../services/define-service';
import type { CustomRole } from '../identity-store';
import { auditBy, type OpContext } from '../op-context';
import { permissionNames } from '../permissions';

export const SaveCustomRoleInput = z.object({
  id: z.string().max(100).optional(),
  name: z
    .string()
    .trim()
    .min(1)
    .max(60)
    .refine((n) => !['owner', 'admin', 'member'].includes(n.toLowerCase()), 'that name is a built-in role'),
  permissions: z.array(z.enum(permissionNames)).max(permissionNames.length),
});
export const DeleteCustomRoleInput = z.object({ id: z.string().min(1).max(100) });

/** A custom role as the REST API answers it (`CustomRoleView` in @letkite/protocol/api), not the store's shape. */
export function customRoleView(r: CustomRole) {
  return { id: r.id, name: r.name, permissions: r.permissions, created_at: r.createdAt };
}

/** Creates or edits a custom role; nobody puts a permission they lack into one. */
export const saveCustomRole = defineService({
  name: 'saveCustomRole',
  input: SaveCustomRoleInput,
  permission: 'members.manage',
  run: async (ctx: OpContext, input) => {
    const beyond = input.permissions.filter((p) => !ctx.actor.user.permissions.has(p));
    if (beyond.length > 0) {
      throw new LetKiteError('forbidden', `you cannot grant permissions you do not hold: ${beyond.join(', ')}`);
    }
    const existing = input.id ? await ctx.deps.identity.getCustomRole(ctx.actor.user.accountId, input.id) : null;
    if (input.id && !existing) throw new LetKiteError('not_found', `no custom role "${input.id}"`);
    const clash = (await ctx.deps.identity.listCustomRoles(ctx.actor.user.accountId)).find(
      (r) => r.name.toLowerCase() === input.name.toLowerCase() && r.id !== input.id,
    );
    if (clash) throw new LetKiteError('conflict', `a role named "${input.name}" exists`);
    const role = {
      id: existing?.id ?? newId('rol'),
      accountId: ctx.actor.user.accountId,
      name: input.name,
      permissions: [...new Set(input.permissions)],
      createdAt: existing?.createdAt ?? ctx.now.toISOString(),
    };
    await ctx.deps.identity.saveCustomRole(
      role,
      auditBy(ctx, existing ? 'role.update' : 'role.create', role.id, {
        name: role.name,
        permissions: role.permissions,
      }),
    );
    return customRoleView(role);
  },
});

/** Deletes a custom role; its members fall back to the member defaults and its open invitations are withdrawn. */
export const deleteCustomRole = defineService({
  name: 'deleteCustomRole',
  input: DeleteCustomRoleInput,
  permission: 'members.manage',
  run: async (ctx: OpContext, input) => {
    const ok = await ctx.deps.identity.deleteCustomRole(
      ctx.actor.user.accountId,
      input.id,
      auditBy(ctx, 'role.delete', input.id),
    );
    if (!ok) throw new LetKiteError('not_found', `no custom role "${input.id}"`);
  },
});
