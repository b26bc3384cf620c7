import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { GatewayDeps } from '../deps';

/** What TOTP checks need from the gateway's dependencies. */
export type TotpDeps = Pick<GatewayDeps, 'identity' | 'now'>;

const PERIOD = 30;

/** A new random TOTP secret (160 bits, base32), and its `otpauth://` URI for an authenticator app. */
export function newTotpSecret(label: string): { secret: string; uri: string } {
  const secret = new Secret({ size: 20 });
  const totp = new TOTP({ issuer: 'LetKite', label, secret, period: PERIOD, digits: 6, algorithm: 'SHA1' });
  return { secret: secret.base32, uri: totp.toString() };
}

/**
 * The time step a code is valid for (±1 step of clock drift), or null. `validate` returns the offset, where 0
 * (the current step) is falsy — hence the explicit null check.
 */
export function totpStepOf(secret: string, code: string, now: Date): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const totp = new TOTP({ secret: Secret.fromBase32(secret), period: PERIOD, digits: 6, algorithm: 'SHA1' });
  const delta = totp.validate({ token, timestamp: now.getTime(), window: 1 });
  if (delta === null) return null;
  return TOTP.counter({ period: PERIOD, timestamp: now.getTime() }) + delta;
}

/**
 * Checks a person's authenticator code and uses it up: each code (in fact each time step, and every step before
 * it) is accepted once, so a code seen over someone's shoulder cannot be replayed.
 */
export async function verifyTotpOnce(args: { userId: string; code: string; deps: TotpDeps }): Promise<boolean> {
  const totp = await args.deps.identity.getTotp(args.userId);
  if (!totp) return false;
  const step = totpStepOf(totp.secret, args.code, args.deps.now());
  if (step === null) return false;
  return args.deps.identity.consumeTotpStep(args.userId, step);
}

/** Ten one-time recovery codes (`xxxx-xxxx-xxxx-xxxx`, 64 bits each) and their hashes for storage. */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: 10 }, () => randomBytes(8).toString('hex').match(/.{4}/g)?.join('-') ?? '');
  return { codes, hashes: codes.map(hashRecoveryCode) };
}

export function hashRecoveryCode(code: string): string {
  return createHash('sha256')
    .update(code.toLowerCase().replace(/[\s-]+/g, ''))
    .digest('hex');
}

/** Uses up one recovery code of the person; false if unknown or already used. */
export async function verifyRecoveryCodeOnce(args: { userId: string; code: string; deps: TotpDeps }): Promise<boolean> {
  return args.deps.identity.consumeRecoveryCode(
    args.userId,
    hashRecoveryCode(args.code),
    args.deps.now().toISOString(),
  );
}
