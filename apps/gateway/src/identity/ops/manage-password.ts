import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { newId } from '../../auth/secrets';
import { defineService } from '../../services/define-service';
import { auditBy, NoInput, type OpContext } from '../op-context';
import { hashPassword, Password } from '../passwords';
import { newRecoveryCodes, newTotpSecret, totpStepOf, verifyTotpOnce } from '../verify-totp';

export const SetPasswordInput = z.object({
  challenge_id: z.string().min(1).max(100),
  password: Password,
  code: z.string().trim().min(6).max(10),
});
export const CodeInput = z.object({ code: z.string().trim().min(6).max(10) });

/** Step 1 of adding (or replacing) password + TOTP: a new authenticator secret to scan. */
export const beginSetPassword = defineService({
  name: 'beginSetPassword',
  input: NoInput,
  run: async (ctx: OpContext, _input) => {
    const user = await ctx.deps.store.getUser(ctx.actor.user.userId);
    const { secret, uri } = newTotpSecret(user?.email ?? ctx.actor.user.name);
    const id = newId('chl');
    await ctx.deps.identity.putChallenge({
      id,
      purpose: 'totp-setup',
      subject: ctx.actor.user.userId,
      value: secret,
      createdAt: ctx.now.toISOString(),
      expiresAt: new Date(ctx.now.getTime() + 30 * 60_000).toISOString(),
    });
    return { challenge_id: id, secret, uri };
  },
});

/** Step 2: the password and a first code from the new secret; returns fresh recovery codes once. */
export const setPassword = defineService({
  name: 'setPassword',
  input: SetPasswordInput,
  run: async (ctx: OpContext, input) => {
    const at = ctx.now.toISOString();
    const c = await ctx.deps.identity.peekChallenge(input.challenge_id, 'totp-setup', ctx.actor.user.userId, at);
    if (!c) throw new LetKiteError('invalid_params', 'the authenticator setup expired; start again');
    const step = totpStepOf(c.value, input.code, ctx.now);
    if (step === null) throw new LetKiteError('invalid_params', 'the authenticator code does not match');
    const recovery = newRecoveryCodes();
    await ctx.deps.identity.setPasswordAndTotp(
      ctx.actor.user.userId,
      {
        passwordHash: await hashPassword(input.password),
        totpSecret: c.value,
        totpStep: step,
        recoveryCodeHashes: recovery.hashes,
      },
      at,
      auditBy(ctx, 'password.set', ctx.actor.user.userId),
    );
    await ctx.deps.identity.takeChallenge(c.id, 'totp-setup', ctx.actor.user.userId, at);
    return { recovery_codes: recovery.codes };
  },
});

/** Removes password + TOTP; the person must keep at least one passkey. */
export const removePassword = defineService({
  name: 'removePassword',
  input: NoInput,
  run: async (ctx: OpContext, _input) => {
    const creds = await ctx.deps.identity.credentialSummary(ctx.actor.user.userId);
    if (!creds.password) throw new LetKiteError('not_found', 'you have no password');
    if (creds.passkeys === 0) throw new LetKiteError('conflict', 'add a passkey before removing your password');
    await ctx.deps.identity.removePasswordAndTotp(
      ctx.actor.user.userId,
      auditBy(ctx, 'password.remove', ctx.actor.user.userId),
    );
  },
});

/** New recovery codes (the old ones stop working), confirmed with a current authenticator code. */
export const regenerateRecoveryCodes = defineService({
  name: 'regenerateRecoveryCodes',
  input: CodeInput,
  run: async (ctx: OpContext, input) => {
    if (!(await verifyTotpOnce({ userId: ctx.actor.user.userId, code: input.code, deps: ctx.deps }))) {
      throw new LetKiteError('unauthenticated', 'the authenticator code does not match');
    }
    const recovery = newRecoveryCodes();
    await ctx.deps.identity.replaceRecoveryCodes(
      ctx.actor.user.userId,
      recovery.hashes,
      auditBy(ctx, 'recovery_codes.regenerate', ctx.actor.user.userId),
    );
    return { recovery_codes: recovery.codes };
  },
});
