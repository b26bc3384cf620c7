import { LetKiteError } from '@letkite/protocol';
import type { Coordination, LimitDecision, Limiter, LimiterOptions } from '../coordination/coordination';

/** Every password sign-in attempt from one client address: slows guessing across many accounts. */
export const SIGN_IN_PER_ADDRESS: LimiterOptions = { limit: 30, windowMs: 60_000 };

/**
 * Password sign-in attempts per (client address, e-mail): PASSWORD_TRIES free, then each further try from that
 * address must wait twice as long as the one before (30 s, 1 min, 2 min … at most 15 min), until a good sign-in
 * or 15 quiet minutes. Keyed by the address too, so someone hammering a person's e-mail slows only themselves:
 * the person signs in from their own address at once (issue #13). A guess needs the password and a fresh second
 * factor together, which is what keeps the many-addresses attacker out.
 */
export const PASSWORD_TRIES = 5;
export const SIGN_IN_PER_ADDRESS_AND_ACCOUNT: LimiterOptions = {
  limit: PASSWORD_TRIES,
  windowMs: 15 * 60_000,
  backoff: { baseMs: 30_000, maxMs: 15 * 60_000 },
};

/** The sign-in limiters, shared by every gateway through Coordination. */
export function signInLimiters(coordination: Coordination): { perAddress: Limiter; perAddressAndAccount: Limiter } {
  return {
    perAddress: coordination.limiter('sign-in.address', SIGN_IN_PER_ADDRESS),
    perAddressAndAccount: coordination.limiter('sign-in.password', SIGN_IN_PER_ADDRESS_AND_ACCOUNT),
  };
}

/** Throws `rate_limited` (with `retry_after_s`) when a limiter refused the attempt. */
export function refuseWhenLimited(decision: LimitDecision, what: string): void {
  if (decision.allowed) return;
  const retryAfterS = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  throw new LetKiteError('rate_limited', `too many ${what}; try again in ${retryAfterS} s`, {
    retry_after_s: retryAfterS,
  });
}
