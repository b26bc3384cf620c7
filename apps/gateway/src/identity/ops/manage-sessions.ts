import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { auditBy, type OpContext, parseInput } from '../op-context';

export const RevokeSessionInput = z.object({ id: z.string().min(1).max(100) });
export const SwitchAccountInput = z.object({ account_id: z.string().min(1).max(100) });

/**
 * Revokes one of the person's web sessions (sign-out is revoking one's own). A revocation is a signal that
 * something may be wrong, so it also closes the person's live MCP sessions at once; their clients reconnect with
 * credentials that are still valid.
 */
export async function revokeSession(ctx: OpContext, raw: unknown) {
  const input = parseInput(RevokeSessionInput, raw);
  const own = (await ctx.deps.identity.listSessions(ctx.user.userId)).some((s) => s.id === input.id);
  if (!own) throw new LetKiteError('not_found', 'no such session');
  await ctx.deps.identity.revokeSession(input.id, ctx.now.toISOString(), auditBy(ctx, 'session.revoke', input.id));
  const closed = await ctx.deps.mcp.closeSessionsOfUser(ctx.user.userId);
  return { closed_mcp_sessions: closed };
}

/** Ends the current session only (plain sign-out); live MCP sessions are left alone. */
export async function signOut(ctx: OpContext) {
  await ctx.deps.identity.revokeSession(
    ctx.user.sessionId,
    ctx.now.toISOString(),
    auditBy(ctx, 'session.sign_out', ctx.user.sessionId),
  );
}

/** Switches the session to another account the person belongs to. */
export async function switchAccount(ctx: OpContext, raw: unknown) {
  const input = parseInput(SwitchAccountInput, raw);
  if (!(await ctx.deps.identity.membership(input.account_id, ctx.user.userId))) {
    throw new LetKiteError('not_found', 'you are not a member of that account');
  }
  await ctx.deps.identity.switchSessionAccount(ctx.user.sessionId, input.account_id);
}
