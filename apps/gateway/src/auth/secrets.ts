import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Bearer secrets: 256 random bits, prefixed so a leaked one is recognisable (`lk_` API token, `lkj_` join token,
 * `lka_`/`lkr_`/`lkc_` OAuth access token, refresh token and authorization code).
 * Only SHA-256 hashes are stored: the secrets are high-entropy, so a slow hash adds nothing.
 */
export function newSecret(prefix: 'lk_' | 'lkj_' | 'lka_' | 'lkr_' | 'lkc_'): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(10).toString('hex')}`;
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
