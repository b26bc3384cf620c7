import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { defineService } from '../../services/define-service';
import { roles } from '../../store/types';
import { auditBy, type OpContext } from '../op-context';
import { assertMayAssign, customRoleFor } from './role-assignment';

export const ChangeMemberRoleInput = z.object({
  user_id: z.string().min(1).max(100),
  role: z.enum(roles),
  custom_role_id: z.string().max(100).nullish(),
});
export const RemoveMemberInput = z.object({ user_id: z.string().min(1).max(100) });
export const RevokeInvitationInput = z.object({ id: z.string().min(1).max(100) });

async function targetMembership(ctx: OpContext, userId: string) {
  const m = await ctx.deps.identity.membership(ctx.actor.user.accountId, userId);
  if (!m) throw new LetKiteError('not_found', `no member "${userId}"`);
  // Changing someone who outranks you (or an equal admin) is reserved to owners.
  if (
    (m.role === 'owner' || m.role === 'admin') &&
    ctx.actor.user.role !== 'owner' &&
    userId !== ctx.actor.user.userId
  ) {
    throw new LetKiteError('forbidden', 'only an owner can change an owner or admin');
  }
  return m;
}

/** Changes a member's built-in role and custom role; the account always keeps an owner. */
export const changeMemberRole = defineService({
  name: 'changeMemberRole',
  input: ChangeMemberRoleInput,
  permission: 'members.manage',
  run: async (ctx: OpContext, input) => {
    const m = await targetMembership(ctx, input.user_id);
    const customRole = await customRoleFor(ctx, input.role, input.custom_role_id);
    assertMayAssign(ctx, input.role, customRole);
    // The store refuses a demotion of the last owner inside its transaction (`conflict`): a count read here would
    // race with a concurrent demotion.
    await ctx.deps.identity.setMemberRole(
      ctx.actor.user.accountId,
      input.user_id,
      input.role,
      customRole?.id ?? null,
      auditBy(ctx, 'member.role', input.user_id, {
        from: m.role,
        to: input.role,
        custom_role: customRole?.name ?? null,
      }),
    );
  },
});

/**
 * Removes a member: their membership, groups, web sessions and API tokens in this account go, and their live MCP
 * sessions in this account are closed at once.
 */
export const removeMember = defineService({
  name: 'removeMember',
  input: RemoveMemberInput,
  permission: 'members.manage',
  run: async (ctx: OpContext, input) => {
    const m = await targetMembership(ctx, input.user_id);
    // As above: the store keeps the last owner (`conflict`).
    await ctx.deps.identity.removeMember(
      ctx.actor.user.accountId,
      input.user_id,
      ctx.now.toISOString(),
      auditBy(ctx, 'member.remove', input.user_id, { role: m.role }),
    );
    await ctx.deps.mcp.closeSessionsOfUser(input.user_id, ctx.actor.user.accountId);
  },
});

/** Withdraws an invitation that was not accepted yet. */
export const revokeInvitation = defineService({
  name: 'revokeInvitation',
  input: RevokeInvitationInput,
  permission: 'members.manage',
  run: async (ctx: OpContext, input) => {
    const ok = await ctx.deps.identity.revokeInvitation(
      ctx.actor.user.accountId,
      input.id,
      ctx.now.toISOString(),
      auditBy(ctx, 'invitation.revoke', input.id),
    );
    if (!ok) throw new LetKiteError('not_found', 'no open invitation with that id');
  },
});
