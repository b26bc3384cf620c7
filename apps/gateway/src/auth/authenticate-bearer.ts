import { LetKiteError } from '@letkite/protocol';
import type { Store } from '../store/types';
import type { Principal } from './principal';
import { hashSecret } from './secrets';

const lastTouched = new Map<string, number>();

/** Resolves an `Authorization` header to a principal, or throws `unauthenticated` (the message never echoes it). */
export async function authenticateBearer(store: Store, header: string | undefined, now: Date): Promise<Principal> {
  const m = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m?.[1]) throw new LetKiteError('unauthenticated', 'a bearer token is required');
  const token = await store.findApiTokenByHash(hashSecret(m[1]));
  if (!token || token.revokedAt !== null || (token.expiresAt !== null && token.expiresAt <= now.toISOString())) {
    throw new LetKiteError('unauthenticated', 'the token is unknown, expired or revoked');
  }
  const role = await store.roleOf(token.accountId, token.userId);
  if (!role) throw new LetKiteError('unauthenticated', 'the token belongs to someone no longer in the account');
  // "Last used" is for people reading the token list; minute precision spares a write on every request.
  if (lastTouched.get(token.id) === undefined || now.getTime() - (lastTouched.get(token.id) ?? 0) > 60_000) {
    lastTouched.set(token.id, now.getTime());
    await store.touchApiToken(token.id, now.toISOString());
  }
  return {
    kind: 'api_token',
    credentialId: token.id,
    accountId: token.accountId,
    userId: token.userId,
    role,
    grant: token.grant,
    actor: `token:${token.id}`,
  };
}
