import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import type { WebSession } from '../identity-store';
import { type PublicOpContext, parseInput } from '../op-context';
import { burnPasswordCheck, passwordMatches } from '../passwords';
import { PASSWORD_TRIES, refuseWhenLimited, signInLimiters } from '../sign-in-limiter';
import { verifyRecoveryCodeOnce, verifyTotpOnce } from '../verify-totp';
import { startSessionFor } from './sign-in-passkey';

export const PasswordSignInInput = z.object({
  email: z.string().trim().min(3).max(254),
  password: z.string().min(1).max(256),
  /** A 6-digit authenticator code, or one recovery code. */
  code: z.string().trim().min(6).max(40),
});

/**
 * Password + second factor sign-in. Attempts are limited per client address and per (address, e-mail), with
 * backoff after PASSWORD_TRIES (sign-in-limiter.ts): never per person alone, so nobody can lock someone else out
 * by guessing at their e-mail. The answer never says which part was wrong.
 */
export async function signInWithPassword(
  ctx: PublicOpContext,
  raw: unknown,
): Promise<{ session: WebSession; token: string }> {
  const input = parseInput(PasswordSignInInput, raw);
  const t = ctx.now.getTime();
  const limiters = signInLimiters(ctx.deps.coordination);
  refuseWhenLimited(await limiters.perAddress.hit(ctx.clientAddress, t), 'sign-in attempts');
  // Counted before the (slow) check, atomically in the shared limiter: concurrent guesses each take one of the
  // tries, however many arrive at once and on however many gateways. Unknown e-mails are limited alike.
  const key = `${ctx.clientAddress} ${input.email.toLowerCase()}`;
  const attempt = await limiters.perAddressAndAccount.hit(key, t);
  refuseWhenLimited(attempt, 'failed sign-in attempts from this address');
  const refused = new LetKiteError('unauthenticated', 'wrong e-mail, password or code');
  const user = await ctx.deps.identity.findUserByEmail(input.email);
  const password = user && (await ctx.deps.identity.getPassword(user.id));
  if (!user || !password) {
    await burnPasswordCheck(input.password);
    throw refused;
  }
  const ok =
    (await passwordMatches(password.passwordHash, input.password)) &&
    (/^\d{6}$/.test(input.code.replace(/\s+/g, ''))
      ? await verifyTotpOnce({ userId: user.id, code: input.code, deps: ctx.deps })
      : await verifyRecoveryCodeOnce({ userId: user.id, code: input.code, deps: ctx.deps }));
  if (!ok) {
    // The try that starts the backoff is audited (once per run of failures from that address).
    if (attempt.count === PASSWORD_TRIES) {
      for (const m of await ctx.deps.identity.membershipsOf(user.id)) {
        await ctx.deps.store.appendAudit({
          accountId: m.accountId,
          at: ctx.now.toISOString(),
          actor: 'system',
          action: 'user.sign_in_throttled',
          target: user.id,
          outcome: 'rate_limited',
          details: { address: ctx.clientAddress, failed_attempts: attempt.count },
        });
      }
    }
    throw refused;
  }
  await limiters.perAddressAndAccount.reset(key);
  const method = /^\d{6}$/.test(input.code.replace(/\s+/g, '')) ? 'password_totp' : 'recovery_code';
  return startSessionFor(ctx, user.id, method);
}
