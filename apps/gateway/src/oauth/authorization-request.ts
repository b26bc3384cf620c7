import type { OAuthContext } from './oauth-deps';
import { OAuthError, type OAuthErrorCode } from './oauth-error';
import { isValidCodeChallenge } from './pkce';
import { redirectUriMatches } from './redirect-uri';
import { type ResolvedClient, resolveClient } from './resolve-client';
import { parseScope, type ToolGroup } from './scopes';
import { mcpResource } from './tokens';

/** The parameters of an authorization request that the consent form carries back unchanged. */
export const authorizationParams = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
  'resource',
] as const;
export type AuthorizationParams = Partial<Record<(typeof authorizationParams)[number], string>>;

export interface AuthorizationRequest {
  client: ResolvedClient;
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
  /** Tool groups the client asked for (the person may choose others). */
  requestedGroups: ToolGroup[];
  resource: string;
  params: AuthorizationParams;
}

/**
 * How a bad request is answered. Until the client and its redirect URI are known good, the person sees an error
 * page (redirecting would make us an open redirector); after that, the error goes back to the client.
 */
export type AuthorizationProblem =
  | { kind: 'page'; message: string }
  | { kind: 'redirect'; redirectUri: string; error: OAuthErrorCode; description: string; state: string | undefined };

/** Picks the authorization parameters out of a query or form, ignoring anything else. */
export function pickAuthorizationParams(source: Record<string, string | undefined>): AuthorizationParams {
  const out: AuthorizationParams = {};
  for (const key of authorizationParams) {
    const v = source[key];
    if (typeof v === 'string' && v.length <= 4000) out[key] = v;
  }
  return out;
}

/** Validates an authorization request (OAuth 2.1 §4.1.1 with PKCE S256 and RFC 8707 `resource`). */
export async function validateAuthorizationRequest(
  ctx: Pick<OAuthContext, 'oauth' | 'now' | 'publicUrl'>,
  params: AuthorizationParams,
): Promise<{ ok: true; request: AuthorizationRequest } | { ok: false; problem: AuthorizationProblem }> {
  if (!params.client_id) return { ok: false, problem: { kind: 'page', message: 'The request names no client.' } };
  let client: ResolvedClient;
  try {
    client = await resolveClient(ctx, params.client_id);
  } catch (err) {
    if (err instanceof OAuthError) return { ok: false, problem: { kind: 'page', message: err.description } };
    throw err;
  }
  const registered = client.metadata.redirect_uris;
  const redirectUri = params.redirect_uri ?? (registered.length === 1 ? registered[0] : undefined);
  if (redirectUri === undefined || !redirectUriMatches(redirectUri, registered)) {
    return {
      ok: false,
      problem: { kind: 'page', message: 'The redirect URI of this request is not one the client registered.' },
    };
  }
  const fail = (error: OAuthErrorCode, description: string) => ({
    ok: false as const,
    problem: { kind: 'redirect' as const, redirectUri, error, description, state: params.state },
  });
  if (params.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be "code"');
  if (params.code_challenge_method !== 'S256') {
    return fail('invalid_request', 'PKCE is required with code_challenge_method S256');
  }
  if (!params.code_challenge || !isValidCodeChallenge(params.code_challenge)) {
    return fail('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
  }
  const resource = mcpResource(ctx.publicUrl);
  // Clients that predate RFC 8707 send no resource; their tokens get this gateway's /mcp audience all the same.
  if (params.resource !== undefined && params.resource !== resource) {
    return fail('invalid_target', `resource must be ${resource}`);
  }
  return {
    ok: true,
    request: {
      client,
      redirectUri,
      codeChallenge: params.code_challenge,
      state: params.state,
      requestedGroups: parseScope(params.scope),
      resource,
      params,
    },
  };
}

/** The URL the browser is sent back to with a result (`code` or `error`), `state` and `iss` (RFC 9207). */
export function redirectWith(redirectUri: string, values: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(values)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}
