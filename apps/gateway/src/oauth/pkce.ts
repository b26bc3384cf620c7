import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../auth/secrets';

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. The same shape holds for an S256 challenge (43). */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export function isValidCodeChallenge(challenge: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(challenge);
}

/** Whether a PKCE verifier hashes (S256, the only method offered) to the challenge of the authorization request. */
export function verifyPkce(verifier: string | undefined, challenge: string): boolean {
  if (verifier === undefined || !VERIFIER.test(verifier)) return false;
  return constantTimeEqual(createHash('sha256').update(verifier).digest('base64url'), challenge);
}
