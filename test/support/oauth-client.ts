import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { asPerson, type TestPerson } from './approvals';
import type { TestGateway } from './letkite';

/**
 * An in-memory OAuth client for the MCP SDK's `auth()`: it registers (or names its metadata document), keeps
 * tokens, and instead of opening a browser records the authorization URL for the test to consent to.
 */
export class TestOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  readonly stateValue = `st-${Math.random().toString(36).slice(2)}`;

  constructor(
    readonly redirectUrl: string,
    readonly clientMetadataUrl?: string,
    readonly name = 'Test MCP client',
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    return this.stateValue;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

export interface ConsentChoice {
  groups: string[];
  machines: { kind: 'all' } | { kind: 'chosen'; ids: string[] } | { kind: 'group'; group_id: string };
  policy: string;
}

/**
 * Consents through the JSON endpoint with `person`'s session (the consent page posts the same decision as a
 * form). Returns the HTTP status and, on success, where the browser would be sent back.
 */
export async function consentJson(
  gw: TestGateway,
  person: TestPerson,
  authorizationUrl: URL,
  choice: ConsentChoice,
): Promise<{ status: number; redirectTo: URL | null; body: Record<string, unknown> }> {
  const params = Object.fromEntries(authorizationUrl.searchParams);
  const r = await asPerson(gw, person, 'POST', '/api/oauth/consent', { ...params, decision: 'allow', ...choice });
  const to = typeof r.body.redirect_to === 'string' ? new URL(r.body.redirect_to) : null;
  return { status: r.status, redirectTo: to, body: r.body };
}

/** Posts a form to the token endpoint. */
export async function tokenRequest(
  gw: TestGateway,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(new URL('/oauth/token', gw.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
