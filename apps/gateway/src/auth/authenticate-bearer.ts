import { LetKiteError } from '@letkite/protocol';
import type { IdentityStore } from '../identity/identity-store';
import { hasPermission, permissionsOf } from '../identity/permissions';
import type { OAuthStore } from '../oauth/oauth-store';
import type { Store } from '../store/types';
import type { Principal } from './principal';
import { hashSecret } from './secrets';

const lastTouched = new Map<string, number>();

/** "Last used" is for people reading the token list; minute precision spares a write on every request. */
function shouldTouch(id: string, now: Date): boolean {
  const last = lastTouched.get(id);
  if (last !== undefined && now.getTime() - last <= 60_000) return false;
  lastTouched.set(id, now.getTime());
  return true;
}

/** What resolving a bearer needs. `resource` is this gateway's `/mcp` URL, the audience OAuth tokens must carry. */
export interface BearerDeps {
  store: Store;
  identity: IdentityStore;
  oauth: OAuthStore;
  now: Date;
  resource: string;
}

/**
 * Resolves an `Authorization` header to a principal: an API token (`lk_…`) or an OAuth access token (`lka_…`) of
 * a connection. Throws `unauthenticated` (the message never echoes the token).
 */
export async function authenticateBearer(deps: BearerDeps, header: string | undefined): Promise<Principal> {
  const m = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m?.[1]) throw new LetKiteError('unauthenticated', 'a bearer token is required');
  return m[1].startsWith('lka_') ? authenticateAccessToken(deps, m[1]) : authenticateApiToken(deps, m[1]);
}

async function authenticateApiToken(deps: BearerDeps, secret: string): Promise<Principal> {
  const { store, now } = deps;
  const token = await store.findApiTokenByHash(hashSecret(secret));
  if (!token || token.revokedAt !== null || (token.expiresAt !== null && token.expiresAt <= now.toISOString())) {
    throw new LetKiteError('unauthenticated', 'the token is unknown, expired or revoked');
  }
  const role = await store.roleOf(token.accountId, token.userId);
  if (!role) throw new LetKiteError('unauthenticated', 'the token belongs to someone no longer in the account');
  if (shouldTouch(token.id, now)) await store.touchApiToken(token.id, now.toISOString());
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

async function authenticateAccessToken(deps: BearerDeps, secret: string): Promise<Principal> {
  const { oauth, identity, now } = deps;
  const found = await oauth.findAccessToken(hashSecret(secret), now.toISOString());
  if (!found) throw new LetKiteError('unauthenticated', 'the access token is unknown, expired or revoked');
  const c = found.connection;
  // RFC 8707: a token issued for another resource (another gateway, or this one under another URL) is refused.
  if (c.resource !== deps.resource) {
    throw new LetKiteError('unauthenticated', 'the access token was issued for another resource', {
      reason: 'audience',
    });
  }
  // A connection never outlives, nor exceeds, its creator's right to connect clients.
  const membership = await identity.membership(c.accountId, c.userId);
  if (!membership)
    throw new LetKiteError('unauthenticated', 'the connection belongs to someone no longer in the account');
  const permissions = permissionsOf(membership.role, membership.customRole?.permissions ?? null);
  if (!hasPermission({ permissions }, 'clients.connect')) {
    throw new LetKiteError('unauthenticated', 'the creator of this connection may no longer connect AI clients');
  }
  if (shouldTouch(c.id, now)) await oauth.touchConnection(c.id, now.toISOString());
  return {
    kind: 'connection',
    credentialId: c.id,
    accountId: c.accountId,
    userId: c.userId,
    role: membership.role,
    grant: c.grant,
    actor: `connection:${c.id}`,
  };
}
