import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import type { WebSession } from '../identity-store';
import { type PublicOpContext, parseInput } from '../op-context';
import { burnPasswordCheck, passwordMatches } from '../passwords';
import { AttemptLimiter, LOCKOUT_AFTER, LOCKOUT_MS } from '../sign-in-limiter';
import { verifyRecoveryCodeOnce, verifyTotpOnce } from '../verify-totp';
import { startSessionFor } from './sign-in-passkey';

export const PasswordSignInInput = z.object({
  email: z.string().trim().min(3).max(254),
  password: z.string().min(1).max(256),
  /** A 6-digit authenticator code, or one recovery code. */
  code: z.string().trim().min(6).max(40),
});

// Per client address and per e-mail: slows guessing across many accounts and at one account.
const byAddress = new AttemptLimiter(30, 60_000);
const byEmail = new AttemptLimiter(10, 60_000);

/**
 * Password + second factor sign-in. Wrong password or code count towards a lockout of the person's password
 * sign-in (LOCKOUT_AFTER in a row → LOCKOUT_MS); while locked even the right password is refused. The answer never
 * says which part was wrong.
 */
export async function signInWithPassword(
  ctx: PublicOpContext,
  raw: unknown,
): Promise<{ session: WebSession; token: string }> {
  const input = parseInput(PasswordSignInInput, raw);
  const t = ctx.now.getTime();
  byAddress.hit(ctx.clientAddress, t);
  byEmail.hit(input.email.toLowerCase(), t);
  const refused = new LetKiteError('unauthenticated', 'wrong e-mail, password or code');
  const user = await ctx.deps.identity.findUserByEmail(input.email);
  const password = user && (await ctx.deps.identity.getPassword(user.id));
  if (!user || !password) {
    await burnPasswordCheck(input.password);
    throw refused;
  }
  // The attempt is counted before the (slow) check, by one conditional write in the store: concurrent guesses
  // each take one of the LOCKOUT_AFTER tries, and one more is refused, however many arrive at once.
  const lockedUntil = new Date(t + LOCKOUT_MS).toISOString();
  const claim = await ctx.deps.identity.claimPasswordAttempt(user.id, {
    now: ctx.now.toISOString(),
    lockAfter: LOCKOUT_AFTER,
    lockedUntil,
  });
  if (!claim.allowed) {
    throw new LetKiteError('rate_limited', 'password sign-in is locked after too many failed attempts', {
      locked_until: claim.lockedUntil,
    });
  }
  const ok =
    (await passwordMatches(password.passwordHash, input.password)) &&
    (/^\d{6}$/.test(input.code.replace(/\s+/g, ''))
      ? await verifyTotpOnce({ userId: user.id, code: input.code, deps: ctx.deps })
      : await verifyRecoveryCodeOnce({ userId: user.id, code: input.code, deps: ctx.deps }));
  if (!ok) {
    // Only the attempt whose count set the lock reports it, so the lockout is audited once.
    if (claim.attempt === LOCKOUT_AFTER) {
      for (const m of await ctx.deps.identity.membershipsOf(user.id)) {
        await ctx.deps.store.appendAudit({
          accountId: m.accountId,
          at: ctx.now.toISOString(),
          actor: 'system',
          action: 'user.lockout',
          target: user.id,
          outcome: 'rate_limited',
          details: { locked_until: lockedUntil, failed_attempts: claim.attempt },
        });
      }
    }
    throw refused;
  }
  await ctx.deps.identity.resetPasswordFailures(user.id);
  const method = /^\d{6}$/.test(input.code.replace(/\s+/g, '')) ? 'password_totp' : 'recovery_code';
  return startSessionFor(ctx, user.id, method);
}
