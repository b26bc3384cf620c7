import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ClientDocumentFetcher } from './client-metadata-document';

let server: Server;
let base: string;
let hits = 0;
const now = new Date('2026-01-01T00:00:00Z');

beforeAll(async () => {
  server = createServer((req, res) => {
    hits += 1;
    const url = `${base}${req.url}`;
    const doc = { client_id: url, client_name: 'Test client', redirect_uris: ['http://127.0.0.1/callback'] };
    switch (req.url) {
      case '/client.json':
      case '/cached.json':
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(doc));
        return;
      case '/other-id.json':
        res.end(JSON.stringify({ ...doc, client_id: 'https://elsewhere.example/client.json' }));
        return;
      case '/redirect.json':
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
        res.end();
        return;
      case '/large.json':
        res.end(JSON.stringify({ ...doc, client_name: 'x'.repeat(6000) }));
        return;
      case '/secret.json':
        res.end(JSON.stringify({ ...doc, client_secret: 'shh' }));
        return;
      case '/bad-redirect.json':
        res.end(JSON.stringify({ ...doc, redirect_uris: ['javascript:alert(1)'] }));
        return;
      case '/slow.json':
        return; // never answers
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://localhost:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const devFetcher = (extra: Partial<ConstructorParameters<typeof ClientDocumentFetcher>[0]> = {}) =>
  new ClientDocumentFetcher({ allowLoopback: true, timeoutMs: 500, ...extra });

test('a valid document is fetched and its declared metadata returned', async () => {
  const m = await devFetcher().fetch(`${base}/client.json`, now);
  expect(m).toMatchObject({ client_name: 'Test client', redirect_uris: ['http://127.0.0.1/callback'] });
});

test('a document is cached: the second fetch does not reach the server', async () => {
  const fetcher = devFetcher();
  await fetcher.fetch(`${base}/cached.json`, now);
  const before = hits;
  await fetcher.fetch(`${base}/cached.json`, now);
  expect(hits).toBe(before);
});

test.each([
  ['a loopback host without the development flag', '/client.json', { allowLoopback: false }],
  [
    'a name that resolves to a private address',
    '/client.json',
    { resolve: async () => [{ address: '10.0.0.5', family: 4 }] },
  ],
  [
    'a name that resolves to a public and a metadata-service address',
    '/client.json',
    {
      resolve: async () => [
        { address: '8.8.8.8', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
    },
  ],
  ['a redirect', '/redirect.json', {}],
  ['a document over the size limit', '/large.json', {}],
  ['a document whose client_id is another URL', '/other-id.json', {}],
  ['a document with a client secret', '/secret.json', {}],
  ['a document with a javascript: redirect URI', '/bad-redirect.json', {}],
  ['a server that does not answer in time', '/slow.json', { timeoutMs: 200 }],
  ['a missing document', '/missing.json', {}],
])('%s is refused with invalid_params', async (_what, path, options) => {
  await expect(devFetcher(options).fetch(`${base}${path}`, now)).rejects.toMatchObject({ code: 'invalid_params' });
});

test.each([
  ['plain http to a public host', 'http://example.com/client.json'],
  ['a literal private address', 'https://10.1.2.3/client.json'],
  ['a literal IPv6 loopback', 'https://[::1]/client.json'],
  ['a root path', 'https://example.com/'],
  ['not a URL', 'https://'],
])('%s is refused before any connection', async (_what, url) => {
  const fetcher = new ClientDocumentFetcher({
    allowLoopback: false,
    resolve: async () => {
      throw new Error('must not resolve');
    },
  });
  await expect(fetcher.fetch(url, now)).rejects.toMatchObject({ code: 'invalid_params' });
});
