import type { Grant, Role } from '../store/types';

/** Who is calling, and what they were granted. Resolved once per request from a bearer credential. */
export interface Principal {
  /** An API token, or an OAuth connection's access token. */
  kind: 'api_token' | 'connection';
  /** Id of the credential (API token or connection) — what an MCP session is bound to. */
  credentialId: string;
  accountId: string;
  userId: string;
  role: Role;
  grant: Grant;
  /** For the audit log: `token:<id>` or `connection:<id>`. */
  actor: string;
}
