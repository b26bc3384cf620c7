import { isLetKiteError } from '@letkite/protocol';
import { isClientIdUrl } from './client-metadata-document';
import type { OAuthContext } from './oauth-deps';
import { OAuthError } from './oauth-error';
import type { ClientMetadata } from './oauth-store';

export interface ResolvedClient {
  clientId: string;
  /** `registered` by DCR here, or described by a `document` at the client_id URL. */
  kind: 'registered' | 'document';
  metadata: ClientMetadata;
}

/** Finds a client by id: a registration of ours, or a client-ID metadata document fetched with SSRF guards. */
export async function resolveClient(
  ctx: Pick<OAuthContext, 'oauth' | 'now'>,
  clientId: string,
): Promise<ResolvedClient> {
  if (clientId.length === 0 || clientId.length > 2000) throw new OAuthError('invalid_client', 'unknown client_id');
  if (isClientIdUrl(clientId)) {
    try {
      return { clientId, kind: 'document', metadata: await ctx.oauth.clientDocuments.fetch(clientId, ctx.now()) };
    } catch (err) {
      if (isLetKiteError(err)) throw new OAuthError('invalid_client', err.message);
      throw err;
    }
  }
  const registered = await ctx.oauth.store.getClient(clientId);
  if (!registered) throw new OAuthError('invalid_client', `unknown client_id "${clientId}"`);
  return { clientId, kind: 'registered', metadata: registered.metadata };
}
