import type { IdentityStore } from '../identity/identity-store';
import type { OAuthStore } from '../oauth/oauth-store';
import type { TunnelOwner } from './tunnel-registry';

/**
 * Whether the credential that opened a tunnel still works: an API token not revoked nor expired, a connection not
 * revoked. A tunnel lives no longer than the credential that asked for it.
 */
export function credentialLiveCheck(deps: { identity: IdentityStore; oauth: OAuthStore; now: () => Date }) {
  return async (owner: TunnelOwner): Promise<boolean> => {
    const now = deps.now().toISOString();
    if (owner.credentialKind === 'connection') {
      const connection = await deps.oauth.getConnection(owner.credentialId);
      return connection !== null && connection.revokedAt === null;
    }
    const tokens = await deps.identity.listApiTokens(owner.accountId, null);
    const token = tokens.find((t) => t.id === owner.credentialId);
    return token !== undefined && token.revokedAt === null && (token.expiresAt === null || token.expiresAt > now);
  };
}
