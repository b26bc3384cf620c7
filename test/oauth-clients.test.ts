import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TestAccount, type TestPerson } from './support/approvals';
import { TestGateway } from './support/letkite';
import { consentJson, TestOAuthProvider } from './support/oauth-client';
import { freePort, removeDir, repoRoot, tempDir, waitFor } from './support/processes';

/** A self-signed certificate for `localhost`, trusted by the gateway process through NODE_EXTRA_CA_CERTS. */
function localhostCertificate(dir: string): { key: string; cert: string; certPath: string } {
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
}

/** A loopback redirect target that records the codes it receives, as a native MCP client's callback would. */
async function callbackServer(): Promise<{ server: Server; url: string; received: URL[] }> {
  const received: URL[] = [];
  const server = createHttpServer((req, res) => {
    received.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    res.end('You can close this window.');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, received };
}

describe('independent OAuth clients: a client-ID metadata document, mcp-remote and a person in a browser', () => {
  let dir: string;
  let gw: TestGateway;
  let account: TestAccount;
  let owner: TestPerson;
  let documentServer: Server;
  let documentUrl: string;
  let documentHits = 0;
  let callback: Awaited<ReturnType<typeof callbackServer>>;

  beforeAll(async () => {
    dir = tempDir('oauth-clients');
    const tls = localhostCertificate(dir);
    callback = await callbackServer();
    documentServer = createHttpsServer({ key: tls.key, cert: tls.cert }, (_req, res) => {
      documentHits += 1;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          client_id: documentUrl,
          client_name: 'Document Client <b>bold</b>',
          client_uri: 'https://client.example',
          redirect_uris: [callback.url.replace(/:\d+\//, '/')],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    // `localhost` may resolve to ::1 or 127.0.0.1 first: listen on both.
    await new Promise<void>((r) => documentServer.listen({ port: 0, host: '::', ipv6Only: false }, () => r()));
    documentUrl = `https://localhost:${(documentServer.address() as AddressInfo).port}/oauth/client.json`;
    gw = await TestGateway.start({ LETKITE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS: '1', NODE_EXTRA_CA_CERTS: tls.certPath });
    account = await TestAccount.open(gw);
    owner = await account.person('Olivia', 'owner');
  });
  afterAll(async () => {
    documentServer?.close();
    callback?.server.close();
    await account?.close();
    await gw?.dispose();
    removeDir(dir);
  });

  test('the SDK client identifies itself by a metadata document URL instead of registering', async () => {
    const provider = new TestOAuthProvider(callback.url, documentUrl);
    const serverUrl = `${gw.url}/mcp`;
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
    expect(provider.clientInformation()?.client_id).toBe(documentUrl);
    const page = await fetch(provider.authorizationUrl as URL, { headers: { cookie: owner.cookie } });
    const html = await page.text();
    expect(html).toContain('Document Client &#60;b&#62;bold&#60;/b&#62;');
    expect(html).toContain('(as declared by the client)');
    expect(html).toContain(`Its description is published at <code>${documentUrl}</code>`);
    const consent = await consentJson(gw, owner, provider.authorizationUrl as URL, {
      groups: ['files'],
      machines: { kind: 'all' },
      policy: 'read-only',
    });
    const code = consent.redirectTo?.searchParams.get('code') as string;
    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');
    const client = new Client({ name: 'cimd', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('read_file');
    await client.close();
    // Fetched once for the page, then served from the cache for consent and token requests.
    expect(documentHits).toBe(1);
  });

  test('a client_id URL on a private address is refused before anything is fetched', async () => {
    const url = new URL('/authorize', gw.url);
    url.searchParams.set('client_id', 'https://10.20.30.40/client.json');
    url.searchParams.set('response_type', 'code');
    const res = await fetch(url, { headers: { cookie: owner.cookie }, redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('does not fetch from');
  });

  test('mcp-remote registers, is consented to, and lists the tools', async () => {
    const configDir = tempDir('mcp-remote');
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [join(repoRoot, 'node_modules/mcp-remote/dist/client.js'), `${gw.url}/mcp`, String(port)],
      { env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true', DISPLAY: '' }, stdio: 'pipe' },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString();
    });
    try {
      const link = await waitFor(
        'the authorization URL',
        () => /Please authorize this client by visiting:\s*(\S+)/.exec(output)?.[1],
      );
      const consent = await consentJson(gw, owner, new URL(link), {
        groups: ['commands', 'files'],
        machines: { kind: 'all' },
        policy: 'full',
      });
      expect(consent.status).toBe(200);
      const back = consent.redirectTo as URL;
      expect(back.port).toBe(String(port));
      await fetch(back);
      await waitFor(
        `the tools list\n${output}`,
        () => output.includes('"machines_list"') && output.includes('"exec"'),
        30_000,
      );
    } finally {
      child.kill();
      removeDir(configDir);
    }
  });

  test('a person consents on the page in a browser, choosing scopes and the policy', async () => {
    const provider = new TestOAuthProvider(callback.url);
    const serverUrl = `${gw.url}/mcp`;
    await auth(provider, { serverUrl });
    let browser: Browser | null = null;
    try {
      browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
        ],
      });
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const [name, value] = owner.cookie.split('=') as [string, string];
      await context.addCookies([{ name, value, url: gw.url }]);
      const page = await context.newPage();
      await page.goto((provider.authorizationUrl as URL).href);
      await expect(page.getByText('(as declared by the client)').first().isVisible()).resolves.toBe(true);
      await expect(page.locator('body').textContent()).resolves.toContain(new URL(callback.url).host);
      for (const box of await page.locator('input[name=groups]').all()) await box.uncheck();
      await page.locator('input[name=groups][value=commands]').check();
      await page.locator('input[name=policy][value=full]').check();
      // Set LETKITE_SCREENSHOT_DIR to keep the picture of the page (phone viewport) for a look.
      await page.screenshot({ path: join(process.env.LETKITE_SCREENSHOT_DIR ?? dir, 'consent.png'), fullPage: true });
      const before = callback.received.length;
      await page.getByRole('button', { name: 'Connect' }).click();
      // The redirect is the request carrying a code or an error: the browser may also ask the callback host for
      // other things (a favicon) around it, in either order.
      const back = await waitFor('the redirect to the client', () =>
        callback.received.slice(before).find((u) => u.searchParams.has('code') || u.searchParams.has('error')),
      ).catch(async (e) => {
        throw new Error(`${String(e)}\n${page.url()}\n${await page.content()}`);
      });
      expect(back.searchParams.get('state')).toBe(provider.stateValue);
      const code = back.searchParams.get('code') as string;
      expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');
      expect(provider.tokens()?.scope).toBe('commands');
    } finally {
      await browser?.close();
    }
  });
});
