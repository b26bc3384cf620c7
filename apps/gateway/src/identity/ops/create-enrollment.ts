import { installCommand } from '../../http/install-script';
import { createJoinToken } from '../../machines/create-join-token';
import { type OpContext, requirePermission } from '../op-context';

/** A one-time join token and the command that enrolls a machine with it (needs `machines.enroll`). */
export async function createEnrollment(ctx: OpContext) {
  requirePermission(ctx.user, 'machines.enroll');
  const join = await createJoinToken(
    { store: ctx.deps.store, now: ctx.now },
    { accountId: ctx.user.accountId, actor: `user:${ctx.user.userId}` },
  );
  return {
    token: join.token,
    expires_at: join.expiresAt,
    // The one-line install (http/install-script.ts): the token is an argument to sh, never in a URL that proxies
    // and access logs keep; the installer hands it to the join on standard input.
    command: installCommand(ctx.deps.publicUrl, join.token),
  };
}
