import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { roles } from '../../store/types';
import { auditBy, type OpContext, parseInput, requirePermission } from '../op-context';
import { assertMayAssign, customRoleFor } from './role-assignment';

export const ChangeMemberRoleInput = z.object({
  user_id: z.string().min(1).max(100),
  role: z.enum(roles),
  custom_role_id: z.string().max(100).nullish(),
});
export const RemoveMemberInput = z.object({ user_id: z.string().min(1).max(100) });
export const RevokeInvitationInput = z.object({ id: z.string().min(1).max(100) });

async function targetMembership(ctx: OpContext, userId: string) {
  const m = await ctx.deps.identity.membership(ctx.user.accountId, userId);
  if (!m) throw new LetKiteError('not_found', `no member "${userId}"`);
  // Changing someone who outranks you (or an equal admin) is reserved to owners.
  if ((m.role === 'owner' || m.role === 'admin') && ctx.user.role !== 'owner' && userId !== ctx.user.userId) {
    throw new LetKiteError('forbidden', 'only an owner can change an owner or admin');
  }
  return m;
}

/** Changes a member's built-in role and custom role; the account always keeps an owner. */
export async function changeMemberRole(ctx: OpContext, raw: unknown) {
  requirePermission(ctx.user, 'members.manage');
  const input = parseInput(ChangeMemberRoleInput, raw);
  const m = await targetMembership(ctx, input.user_id);
  const customRole = await customRoleFor(ctx, input.role, input.custom_role_id);
  assertMayAssign(ctx, input.role, customRole);
  // The store refuses a demotion of the last owner inside its transaction (`conflict`): a count read here would
  // race with a concurrent demotion.
  await ctx.deps.identity.setMemberRole(
    ctx.user.accountId,
    input.user_id,
    input.role,
    customRole?.id ?? null,
    auditBy(ctx, 'member.role', input.user_id, { from: m.role, to: input.role, custom_role: customRole?.name ?? null }),
  );
}

/**
 * Removes a member: their membership, groups, web sessions and API tokens in this account go, and their live MCP
 * sessions in this account are closed at once.
 */
export async function removeMember(ctx: OpContext, raw: unknown) {
  requirePermission(ctx.user, 'members.manage');
  const input = parseInput(RemoveMemberInput, raw);
  const m = await targetMembership(ctx, input.user_id);
  // As above: the store keeps the last owner (`conflict`).
  await ctx.deps.identity.removeMember(
    ctx.user.accountId,
    input.user_id,
    ctx.now.toISOString(),
    auditBy(ctx, 'member.remove', input.user_id, { role: m.role }),
  );
  await ctx.deps.mcp.closeSessionsOfUser(input.user_id, ctx.user.accountId);
}

/** Withdraws an invitation that was not accepted yet. */
export async function revokeInvitation(ctx: OpContext, raw: unknown) {
  requirePermission(ctx.user, 'members.manage');
  const input = parseInput(RevokeInvitationInput, raw);
  const ok = await ctx.deps.identity.revokeInvitation(
    ctx.user.accountId,
    input.id,
    ctx.now.toISOString(),
    auditBy(ctx, 'invitation.revoke', input.id),
  );
  if (!ok) throw new LetKiteError('not_found', 'no open invitation with that id');
}
