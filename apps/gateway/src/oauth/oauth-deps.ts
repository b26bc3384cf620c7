import type { GatewayDeps } from '../deps';
import type { ClientDocumentFetcher } from './client-metadata-document';
import type { OAuthStore } from './oauth-store';

/** The OAuth authorization server's own dependencies. */
export interface OAuthDeps {
  store: OAuthStore;
  clientDocuments: ClientDocumentFetcher;
  /** Dynamic client registrations allowed per client address an hour (LETKITE_OAUTH_REGISTRATIONS_PER_HOUR). */
  registrationsPerHour?: number;
}

/** What OAuth operations need: the gateway's dependencies, the OAuth ones, and a way to cut live MCP sessions. */
export type OAuthContext = Pick<
  GatewayDeps,
  'store' | 'identity' | 'policies' | 'coordination' | 'now' | 'log' | 'publicUrl'
> & {
  oauth: OAuthDeps;
  mcp: { closeSessionsOf(credentialId: string): Promise<void> };
};
