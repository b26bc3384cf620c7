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
    // The token goes on stdin (`-`), never on the command line where `ps` and shell history would keep it.
    command: `echo '${join.token}' | letkite agent join ${ctx.deps.publicUrl} -`,
  };
}
