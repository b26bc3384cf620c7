import type { GatewayDeps } from '../deps';
import type { ClientDocumentFetcher } from './client-metadata-document';
import type { OAuthStore } from './oauth-store';

/** The OAuth authorization server's own dependencies. */
export interface OAuthDeps {
  store: OAuthStore;
  clientDocuments: ClientDocumentFetcher;
}

/** What OAuth operations need: the gateway's dependencies, the OAuth ones, and a way to cut live MCP sessions. */
export type OAuthContext = Pick<GatewayDeps, 'store' | 'identity' | 'coordination' | 'now' | 'log' | 'publicUrl'> & {
  oauth: OAuthDeps;
  mcp: { closeSessionsOf(credentialId: string): Promise<void> };
};
