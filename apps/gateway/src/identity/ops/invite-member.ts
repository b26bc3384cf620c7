import { randomBytes } from 'node:crypto';
import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { hashSecret, newId } from '../../auth/secrets';
import { defineService } from '../../services/define-service';
import { roles } from '../../store/types';
import { auditBy, type OpContext } from '../op-context';
import { assertMayAssign, customRoleFor } from './role-assignment';

export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

export const InviteMemberInput = z.object({
  email: z.email().max(254),
  role: z.enum(roles).default('member'),
  custom_role_id: z.string().max(100).nullish(),
});

/**
 * Invites a person by e-mail: a one-time link (7 days) to join with a passkey or password + TOTP. When no mail
 * server is configured, or sending fails, the link is returned to the inviter to pass on.
 */
export const inviteMember = defineService({
  name: 'inviteMember',
  input: InviteMemberInput,
  permission: 'members.manage',
  run: async (ctx: OpContext, input) => {
    const customRole = await customRoleFor(ctx, input.role, input.custom_role_id);
    assertMayAssign(ctx, input.role, customRole);
    const existing = await ctx.deps.identity.findUserByEmail(input.email);
    if (existing && (await ctx.deps.identity.membership(ctx.actor.user.accountId, existing.id))) {
      throw new LetKiteError('conflict', `${input.email} is already a member`);
    }
    const token = `lkinv_${randomBytes(32).toString('base64url')}`;
    const id = newId('inv');
    const createdAt = ctx.now.toISOString();
    const expiresAt = new Date(ctx.now.getTime() + INVITATION_TTL_MS).toISOString();
    await ctx.deps.identity.createInvitation(
      {
        id,
        accountId: ctx.actor.user.accountId,
        email: input.email,
        role: input.role,
        customRoleId: customRole?.id ?? null,
        invitedBy: ctx.actor.user.userId,
        tokenHash: hashSecret(token),
        createdAt,
        expiresAt,
        acceptedAt: null,
        revokedAt: null,
      },
      auditBy(ctx, 'invitation.create', id, { email: input.email, role: input.role, custom_role: customRole?.name }),
    );
    const link = `${ctx.deps.publicUrl}/invite#${token}`;
    const account = await ctx.deps.identity.getAccount(ctx.actor.user.accountId);
    let sent = false;
    if (ctx.deps.mailer.configured) {
      try {
        await ctx.deps.mailer.send({
          to: input.email,
          subject: `${ctx.actor.user.name} invited you to LetKite (${account?.name ?? 'an account'})`,
          text: [
            `${ctx.actor.user.name} invited you to the LetKite account "${account?.name ?? ''}" as ${customRole?.name ?? input.role}.`,
            '',
            'Open this link to join (it works once, for 7 days):',
            link,
            '',
            'If you did not expect this, ignore this e-mail.',
          ].join('\n'),
        });
        sent = true;
      } catch (err) {
        ctx.deps.log(`invitation ${id}: sending the e-mail failed: ${(err as Error).message}`);
      }
    }
    return { id, email: input.email, expires_at: expiresAt, sent, ...(sent ? {} : { link }) };
  },
});
