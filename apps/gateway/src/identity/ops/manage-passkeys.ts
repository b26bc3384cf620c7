import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { newId } from '../../auth/secrets';
import { defineService } from '../../services/define-service';
import { auditBy, NoInput, type OpContext } from '../op-context';
import {
  CHALLENGE_TTL_MS,
  newChallenge,
  passkeyRegistrationOptions,
  verifyPasskeyRegistration,
} from '../register-passkey';

export const AddPasskeyInput = z.object({
  challenge_id: z.string().min(1).max(100),
  name: z.string().trim().min(1).max(100).default('Passkey'),
  response: z.looseObject({ id: z.string() }),
});
export const RemovePasskeyInput = z.object({ id: z.string().min(1).max(1024) });

/** Registration options for one more passkey of the signed-in person. */
export const beginAddPasskey = defineService({
  name: 'beginAddPasskey',
  input: NoInput,
  run: async (ctx: OpContext, _input) => {
    const user = await ctx.deps.store.getUser(ctx.actor.user.userId);
    const challenge = newChallenge();
    const id = newId('chl');
    await ctx.deps.identity.putChallenge({
      id,
      purpose: 'passkey-add',
      subject: ctx.actor.user.userId,
      value: challenge,
      createdAt: ctx.now.toISOString(),
      expiresAt: new Date(ctx.now.getTime() + CHALLENGE_TTL_MS).toISOString(),
    });
    const options = await passkeyRegistrationOptions({
      userId: ctx.actor.user.userId,
      userName: user?.email ?? ctx.actor.user.name,
      displayName: ctx.actor.user.name,
      challenge,
      deps: ctx.deps,
    });
    return { challenge_id: id, options };
  },
});

/** Verifies and stores the new passkey (user verification required). */
export const addPasskey = defineService({
  name: 'addPasskey',
  input: AddPasskeyInput,
  run: async (ctx: OpContext, input) => {
    const c = await ctx.deps.identity.takeChallenge(
      input.challenge_id,
      'passkey-add',
      ctx.actor.user.userId,
      ctx.now.toISOString(),
    );
    if (!c) throw new LetKiteError('unauthenticated', 'the passkey prompt expired; try again');
    const passkey = await verifyPasskeyRegistration({
      userId: ctx.actor.user.userId,
      name: input.name,
      challenge: c.value,
      response: input.response,
      deps: ctx.deps,
    });
    await ctx.deps.identity.addPasskey(passkey, auditBy(ctx, 'passkey.add', passkey.id, { name: passkey.name }));
    return { id: passkey.id, name: passkey.name };
  },
});

/** Removes one of the person's passkeys, unless it is their last way to sign in. */
export const removePasskey = defineService({
  name: 'removePasskey',
  input: RemovePasskeyInput,
  run: async (ctx: OpContext, input) => {
    const creds = await ctx.deps.identity.credentialSummary(ctx.actor.user.userId);
    if (creds.passkeys <= 1 && !creds.password) {
      throw new LetKiteError('conflict', 'this is your only way to sign in; add another passkey or a password first');
    }
    const removed = await ctx.deps.identity.deletePasskey(
      ctx.actor.user.userId,
      input.id,
      auditBy(ctx, 'passkey.remove', input.id),
    );
    if (!removed) throw new LetKiteError('not_found', 'no such passkey');
  },
});
