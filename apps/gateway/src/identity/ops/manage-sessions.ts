import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { defineService } from '../../services/define-service';
import { auditBy, NoInput, type OpContext } from '../op-context';

export const RevokeSessionInput = z.object({ id: z.string().min(1).max(100) });
export const SwitchAccountInput = z.object({ account_id: z.string().min(1).max(100) });

/**
 * Revokes one of the person's web sessions (sign-out is revoking one's own). A revocation is a signal that
 * something may be wrong, so it also closes the person's live MCP sessions at once; their clients reconnect with
 * credentials that are still valid.
 */
export const revokeSession = defineService({
  name: 'revokeSession',
  input: RevokeSessionInput,
  run: async (ctx: OpContext, input) => {
    const own = (await ctx.deps.identity.listSessions(ctx.actor.user.userId)).some((s) => s.id === input.id);
    if (!own) throw new LetKiteError('not_found', 'no such session');
    await ctx.deps.identity.revokeSession(input.id, ctx.now.toISOString(), auditBy(ctx, 'session.revoke', input.id));
    const closed = await ctx.deps.mcp.closeSessionsOfUser(ctx.actor.user.userId);
    return { closed_mcp_sessions: closed };
  },
});

/** Ends the current session only (plain sign-out); live MCP sessions are left alone. */
export const signOut = defineService({
  name: 'signOut',
  input: NoInput,
  run: async (ctx: OpContext, _input) => {
    await ctx.deps.identity.revokeSession(
      ctx.actor.user.sessionId,
      ctx.now.toISOString(),
      auditBy(ctx, 'session.sign_out', ctx.actor.user.sessionId),
    );
  },
});

/** Switches the session to another account the person belongs to. */
export const switchAccount = defineService({
  name: 'switchAccount',
  input: SwitchAccountInput,
  run: async (ctx: OpContext, input) => {
    if (!(await ctx.deps.identity.membership(input.account_id, ctx.actor.user.userId))) {
      throw new LetKiteError('not_found', 'you are not a member of that account');
    }
    await ctx.deps.identity.switchSessionAccount(ctx.actor.user.sessionId, input.account_id);
  },
});
