import { LetKiteError } from '@letkite/protocol';
import type { Role } from '../../store/types';
import type { CustomRole } from '../identity-store';
import type { OpContext } from '../op-context';

/**
 * No one hands out more than they hold: only owners make owners; admins make admins and members; anyone else with
 * `members.manage` only makes members, with a custom role whose permissions they hold themselves.
 */
export function assertMayAssign(ctx: OpContext, role: Role, customRole: CustomRole | null): void {
  const mine = ctx.actor.user.role;
  if (role === 'owner' && mine !== 'owner') throw new LetKiteError('forbidden', 'only an owner can make an owner');
  if (role === 'admin' && mine !== 'owner' && mine !== 'admin') {
    throw new LetKiteError('forbidden', 'only an owner or admin can make an admin');
  }
  const beyond = customRole?.permissions.filter((p) => !ctx.actor.user.permissions.has(p)) ?? [];
  if (beyond.length > 0) {
    throw new LetKiteError('forbidden', `you cannot grant permissions you do not hold: ${beyond.join(', ')}`);
  }
}

/** The custom role named by an input, in the person's account (or `not_found`); custom roles apply to members. */
export async function customRoleFor(ctx: OpContext, role: Role, id: string | null | undefined) {
  if (!id) return null;
  if (role !== 'member') throw new LetKiteError('invalid_params', 'a custom role applies to members only');
  const found = await ctx.deps.identity.getCustomRole(ctx.actor.user.accountId, id);
  if (!found) throw new LetKiteError('not_found', `no custom role "${id}"`);
  return found;
}
