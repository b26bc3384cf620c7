import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { asPerson, TestAccount, type TestPerson } from './support/approvals';
import { TestGateway } from './support/letkite';
import { type ConsentChoice, consentJson, TestOAuthProvider, tokenRequest } from './support/oauth-client';

const FILES_READ_ONLY: ConsentChoice = { groups: ['files'], machines: { kind: 'all' }, policy: 'read-only' };

/** Runs the SDK's OAuth flow up to the redirect, consents as `person`, and redeems the code. */
async function connectWithOAuth(gw: TestGateway, person: TestPerson, provider: TestOAuthProvider) {
  const serverUrl = `${gw.url}/mcp`;
  expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
  const authorizationUrl = provider.authorizationUrl as URL;
  const consent = await consentJson(gw, person, authorizationUrl, FILES_READ_ONLY);
  expect(consent.status).toBe(200);
  const back = consent.redirectTo as URL;
  expect(back.searchParams.get('state')).toBe(provider.stateValue);
  expect(back.searchParams.get('iss')).toBe(gw.url);
  const code = back.searchParams.get('code') as string;
  expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');
  return { authorizationUrl, code };
}

async function mcpOver(gw: TestGateway, provider: TestOAuthProvider): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.url), { authProvider: provider }));
  return client;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const mcpPost = (gw: TestGateway, headers: Record<string, string>, body: unknown = initialize) =>
  fetch(new URL('/mcp', gw.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

describe('MCP clients connect through OAuth 2.1', () => {
  let gw: TestGateway;
  let account: TestAccount;
  let owner: TestPerson;

  beforeAll(async () => {
    gw = await TestGateway.start();
    account = await TestAccount.open(gw);
    owner = await account.person('Olivia', 'owner');
  });
  afterAll(async () => {
    await account?.close();
    await gw?.dispose();
  });

  test('discovery: /mcp answers 401 naming the protected-resource metadata, which names this authorization server', async () => {
    const res = await mcpPost(gw, {});
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toBe(`Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp"`);
    const prm = (await (await fetch(`${gw.url}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
      string,
      unknown
    >;
    expect(prm).toMatchObject({ resource: `${gw.url}/mcp`, authorization_servers: [gw.url] });
    const root = await (await fetch(`${gw.url}/.well-known/oauth-protected-resource`)).json();
    expect(root).toEqual(prm);
    const as = (await (await fetch(`${gw.url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as).toMatchObject({
      issuer: gw.url,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
    });
  });

  test('the SDK client registers, gets consent and lists only the tools of its scopes and policy', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    await connectWithOAuth(gw, owner, provider);
    expect(provider.tokens()).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'files' });
    const client = await mcpOver(gw, provider);
    const { tools } = await client.listTools();
    // read-only: the file tools that only read; no exec (not in scope), no write_file (policy).
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['approval_wait', 'git_diff', 'git_status', 'list_dir', 'machines_list', 'read_file'].sort(),
    );
    const listed = await client.callTool({ name: 'machines_list', arguments: {} });
    expect(listed.isError).toBeFalsy();
    await client.close();
  });

  test('a call outside the scopes is 403 insufficient_scope asking for the missing group', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    await connectWithOAuth(gw, owner, provider);
    const access = provider.tokens()?.access_token as string;
    const init = await mcpPost(gw, bearer(access));
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id') as string;
    const res = await mcpPost(
      gw,
      { ...bearer(access), 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'exec', arguments: { machine: 'x' } } },
    );
    expect(res.status).toBe(403);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="commands files"');
    expect(challenge).toContain('resource_metadata=');
  });

  test('refresh rotates the refresh token; replaying a rotated one revokes the whole grant', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    await connectWithOAuth(gw, owner, provider);
    const clientId = provider.clientInformation()?.client_id as string;
    const first = provider.tokens() as { access_token: string; refresh_token: string };
    const rotated = await tokenRequest(gw, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: clientId,
      resource: `${gw.url}/mcp`,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(first.refresh_token);
    const second = rotated.body as { access_token: string; refresh_token: string };
    expect((await mcpPost(gw, bearer(second.access_token))).status).toBe(200);

    const replay = await tokenRequest(gw, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: clientId,
    });
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The grant is gone: the newest refresh token and the live access token stop working too.
    const after = await tokenRequest(gw, {
      grant_type: 'refresh_token',
      refresh_token: second.refresh_token,
      client_id: clientId,
    });
    expect(after).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await mcpPost(gw, bearer(second.access_token))).status).toBe(401);
    expect(account.audit('connection.revoke').length).toBeGreaterThan(0);
  });

  test('a code redeemed with the wrong PKCE verifier or another redirect URI is refused, and burnt', async () => {
    for (const wrong of ['verifier', 'redirect'] as const) {
      const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
      const serverUrl = `${gw.url}/mcp`;
      await auth(provider, { serverUrl });
      const consent = await consentJson(gw, owner, provider.authorizationUrl as URL, FILES_READ_ONLY);
      const code = consent.redirectTo?.searchParams.get('code') as string;
      const clientId = provider.clientInformation()?.client_id as string;
      const form = {
        grant_type: 'authorization_code',
        code,
        client_id: clientId,
        redirect_uri: provider.redirectUrl,
        code_verifier: provider.codeVerifier(),
      };
      const bad =
        wrong === 'verifier'
          ? { ...form, code_verifier: 'x'.repeat(43) }
          : { ...form, redirect_uri: 'http://127.0.0.1:4567/other' };
      expect(await tokenRequest(gw, bad)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect(await tokenRequest(gw, form)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    }
  });

  test('an authorization request with an unregistered redirect URI gets an error page, never a redirect', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    await auth(provider, { serverUrl: `${gw.url}/mcp` });
    const url = new URL(provider.authorizationUrl as URL);
    url.searchParams.set('redirect_uri', 'https://evil.example/callback');
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: owner.cookie } });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('not one the client registered');
    // The loopback exception: the same path on any port is the registered redirect.
    url.searchParams.set('redirect_uri', 'http://127.0.0.1:9999/callback');
    const page = await fetch(url, { redirect: 'manual', headers: { cookie: owner.cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  });

  test('a resource other than this /mcp is refused at /authorize with invalid_target', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    await auth(provider, { serverUrl: `${gw.url}/mcp` });
    const url = new URL(provider.authorizationUrl as URL);
    url.searchParams.set('resource', 'https://other.example/mcp');
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: owner.cookie } });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get('location') as string).searchParams.get('error')).toBe('invalid_target');
  });

  test('a signed-out person is sent to sign in and back to the consent page', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    await auth(provider, { serverUrl: `${gw.url}/mcp` });
    const res = await fetch(provider.authorizationUrl as URL, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location') as string, gw.url);
    expect(to.pathname).toBe('/sign-in');
    expect(to.searchParams.get('next')).toMatch(/^\/authorize\?/);
  });

  test('a member without clients.connect cannot create a connection', async () => {
    const viewer = await account.person('Victor', 'member', { permissions: ['machines.view'] });
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    await auth(provider, { serverUrl: `${gw.url}/mcp` });
    const consent = await consentJson(gw, viewer, provider.authorizationUrl as URL, FILES_READ_ONLY);
    expect(consent.status).toBe(403);
    expect(consent.body).toMatchObject({ error: { code: 'forbidden' } });
    const page = await fetch(provider.authorizationUrl as URL, { headers: { cookie: viewer.cookie } });
    expect(await page.text()).toContain('does not allow connecting AI clients');
  });

  test('revoking a connection in the web app closes its open MCP session at once', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    await connectWithOAuth(gw, owner, provider);
    const client = await mcpOver(gw, provider);
    await client.listTools();
    const listed = await asPerson(gw, owner, 'GET', '/api/connections');
    const mine = (listed.body.connections as { id: string; client_name: string }[])[0];
    expect(mine?.client_name).toBe('Test MCP client');
    const revoked = await asPerson(gw, owner, 'DELETE', `/api/connections/${mine?.id}`);
    expect(revoked.status).toBe(200);
    await expect(client.listTools()).rejects.toThrow();
    const access = provider.tokens()?.access_token as string;
    expect((await mcpPost(gw, bearer(access))).status).toBe(401);
    await client.close().catch(() => {});
  });

  test('/mcp refuses a foreign browser origin and answers CORS for its own', async () => {
    expect((await mcpPost(gw, { origin: 'http://evil.example' })).status).toBe(403);
    const preflight = await fetch(new URL('/mcp', gw.url), {
      method: 'OPTIONS',
      headers: { origin: gw.url, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    const res = await mcpPost(gw, { origin: gw.url });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe(gw.url);
    expect(res.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
    expect(res.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
  });

  test('a token issued for this gateway under another public URL (another audience) is refused', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    await connectWithOAuth(gw, owner, provider);
    const access = provider.tokens()?.access_token as string;
    expect((await mcpPost(gw, bearer(access))).status).toBe(200);
    const moved = `http://127.0.0.1:${gw.port}`;
    // The last test of the file: the gateway stays on the new URL until it is disposed.
    gw.env.LETKITE_PUBLIC_URL = moved;
    await gw.restart();
    const res = await fetch(`${moved}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...bearer(access) },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
