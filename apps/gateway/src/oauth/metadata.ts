import { toolGroupNames } from './scopes';
import { issuerOf, mcpResource } from './tokens';

/** Protected-resource metadata of `/mcp` (RFC 9728). */
export function protectedResourceMetadata(publicUrl: string) {
  return {
    resource: mcpResource(publicUrl),
    authorization_servers: [issuerOf(publicUrl)],
    scopes_supported: toolGroupNames,
    bearer_methods_supported: ['header'],
    resource_name: 'LetKite',
    resource_documentation: `${issuerOf(publicUrl)}/`,
  };
}

/** Where a client finds the protected-resource metadata: the path-inserted well-known URL of `/mcp`. */
export function protectedResourceMetadataUrl(publicUrl: string): string {
  return `${issuerOf(publicUrl)}/.well-known/oauth-protected-resource/mcp`;
}

/** Authorization-server metadata (RFC 8414), also served at the OpenID discovery path. */
export function authorizationServerMetadata(publicUrl: string) {
  const issuer = issuerOf(publicUrl);
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    scopes_supported: toolGroupNames,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
