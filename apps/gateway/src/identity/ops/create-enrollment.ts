import { installCommand } from '../../http/install-script';
import { createJoinToken } from '../../machines/create-join-token';
import { actorLabel } from '../../services/actor';
import { defineService } from '../../services/define-service';
import { NoInput, type OpContext } from '../op-context';

/** A one-time join token and the command that enrolls a machine with it (needs `machines.enroll`). */
export const createEnrollment = defineService({
  name: 'createEnrollment',
  input: NoInput,
  permission: 'machines.enroll',
  run: async (ctx: OpContext, _input) => {
    const join = await createJoinToken(
      { store: ctx.deps.store, now: ctx.now },
      { accountId: ctx.actor.user.accountId, actor: actorLabel(ctx.actor) },
    );
    return {
      token: join.token,
      expires_at: join.expiresAt,
      // The one-line install (http/install-script.ts): the token is an argument to sh, never in a URL that proxies
      // and access logs keep; the installer hands it to the join on standard input.
      command: installCommand(ctx.deps.publicUrl, join.token),
    };
  },
});
