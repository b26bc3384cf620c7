import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { actorLabel } from '../../services/actor';
import { defineService } from '../../services/define-service';
import type { OpContext } from '../op-context';
import { newWebSession, signInAudit } from '../session-cookie';
import { resolveOnboardingTicket } from './onboarding-ticket';

export const AcceptInvitationInput = z.object({ token: z.string().min(10).max(200) });

/**
 * A signed-in person accepts an invitation to another account (a person can belong to several). The invitation's
 * e-mail must be theirs. Returns a new session working in that account.
 */
export const acceptInvitation = defineService({
  name: 'acceptInvitation',
  input: AcceptInvitationInput,
  run: async (ctx: OpContext, input) => {
    const ticket = await resolveOnboardingTicket(ctx.deps, input.token, ctx.now);
    const user = await ctx.deps.store.getUser(ctx.actor.user.userId);
    if (ticket.kind !== 'invitation' || !user || user.email?.toLowerCase() !== ticket.email?.toLowerCase()) {
      throw new LetKiteError('forbidden', `this invitation is for ${ticket.email ?? 'someone else'}`);
    }
    // Only the fast path and its explanation: completeOnboarding's membership insert decides (two invitations
    // accepted at once both pass this read).
    if (await ctx.deps.identity.membership(ticket.accountId, user.id)) {
      throw new LetKiteError('conflict', 'you are already a member of this account');
    }
    // The new session carries over how the person signed in to the current one.
    const current = (await ctx.deps.identity.listSessions(user.id)).find((s) => s.id === ctx.actor.user.sessionId);
    if (!current) throw new LetKiteError('unauthenticated', 'sign in first');
    const { session, token } = newWebSession({
      userId: user.id,
      accountId: ticket.accountId,
      method: current.method,
      userAgent: current.userAgent,
      now: ctx.now,
    });
    const ok = await ctx.deps.identity.completeOnboarding({
      via: { kind: 'invitation', invitationId: ticket.id },
      user,
      existingUser: true,
      membership: { accountId: ticket.accountId, role: ticket.role, customRoleId: ticket.customRoleId },
      credentials: {},
      session,
      audit: [
        {
          accountId: ticket.accountId,
          at: ctx.now.toISOString(),
          actor: actorLabel({ kind: 'person', id: user.id }),
          action: 'invitation.accept',
          target: ticket.id,
          outcome: 'ok',
          details: { role: ticket.role, existing_user: true },
        },
        signInAudit(session, actorLabel({ kind: 'person', id: user.id })),
      ],
    });
    if (!ok) throw new LetKiteError('invalid_token', 'this invitation was used meanwhile');
    return { session, token };
  },
});
