import { createECDH, createPublicKey, type ECDH, randomBytes, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
// @ts-expect-error http_ece ships no type declarations
import ece from 'http_ece';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { asPerson, TestAccount, type TestPerson } from './support/approvals';
import { callTool, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { waitFor } from './support/processes';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A push service on plain local HTTP: it records each message it is asked to deliver. */
async function startPushService(): Promise<{ server: Server; origin: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(201).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** Verifies an ES256 JWT with an uncompressed P-256 public key (base64url); returns its claims. */
function verifyVapidJwt(jwt: string, publicKey: string): Record<string, unknown> {
  const [header, claims, signature] = jwt.split('.');
  if (!header || !claims || !signature) throw new Error('not a JWT');
  expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toMatchObject({ alg: 'ES256', typ: 'JWT' });
  const raw = Buffer.from(publicKey, 'base64url');
  expect(raw.length).toBe(65);
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: raw.subarray(1, 33).toString('base64url'),
      y: raw.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
  const ok = verify(
    'sha256',
    Buffer.from(`${header}.${claims}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );
  expect(ok).toBe(true);
  return JSON.parse(Buffer.from(claims, 'base64url').toString()) as Record<string, unknown>;
}

describe('approvals: web push', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let account: TestAccount;
  let admin: TestPerson;
  let requester: TestPerson;
  let ai: Client;
  let push: Awaited<ReturnType<typeof startPushService>>;
  const device: { ecdh: ECDH; auth: Buffer } = { ecdh: createECDH('prime256v1'), auth: randomBytes(16) };
  device.ecdh.generateKeys();

  beforeAll(async () => {
    push = await startPushService();
    gw = await TestGateway.start({ LETKITE_PUSH_INSECURE_LOOPBACK: '1' });
    agent = await gw.addAgent('pm1');
    account = await TestAccount.open(gw);
    admin = await account.person('Adele', 'admin');
    requester = await account.person('Rita', 'member', { permissions: ['machines.view', 'clients.connect'] });
    const token = await account.token(requester.userId, {
      name: 'ops',
      shell: 'full',
      files: [{ path: '*', access: 'rw' }],
      commands: { mode: 'shell', default: 'approve' },
      approval: { approvers: 'any_admin', timeout: '5m' },
    });
    ai = await mcpClient(gw.url, token.token);
    await machineOnline(ai, 'pm1');
  });

  afterAll(async () => {
    await ai?.close();
    await account?.close();
    await agent?.dispose();
    await gw?.dispose();
    await new Promise((r) => push?.server.close(r));
  });

  test('every subscribed device of an approver gets an encrypted, VAPID-signed push that opens the approval page', async () => {
    const key = await asPerson(gw, admin, 'GET', '/api/push/vapid-public-key');
    const vapidPublicKey = key.body.public_key as string;
    expect(Buffer.from(vapidPublicKey, 'base64url').length).toBe(65);

    const endpoint = `${push.origin}/push/adele-phone`;
    const subscription = {
      endpoint,
      keys: { p256dh: device.ecdh.getPublicKey().toString('base64url'), auth: device.auth.toString('base64url') },
    };
    expect((await asPerson(gw, admin, 'POST', '/api/push/subscriptions', subscription)).status).toBe(201);
    // The requester (a member, not an approver under any_admin) subscribes too, and must get nothing.
    const ritaSub = { ...subscription, endpoint: `${push.origin}/push/rita`, keys: { ...subscription.keys } };
    expect((await asPerson(gw, requester, 'POST', '/api/push/subscriptions', ritaSub)).status).toBe(201);
    // Endpoints that are not https (beyond the loopback allowance) are refused.
    const bad = await asPerson(gw, admin, 'POST', '/api/push/subscriptions', {
      ...subscription,
      endpoint: 'http://10.0.0.1/x',
    });
    expect(bad.status).toBe(400);

    const pending = await callTool(ai, 'exec', { machine: 'pm1', command: 'uname -a' });
    const approvalId = (pending.data as { approval_id: string }).approval_id;
    expect(approvalId).toMatch(/^apr_/);

    const message = await waitFor('push delivery', () => push.received.find((r) => r.path === '/push/adele-phone'));
    expect(message.headers['content-encoding']).toBe('aes128gcm');
    expect(Number(message.headers.ttl)).toBeGreaterThan(0);

    const auth = /^vapid t=([^,]+), k=(.+)$/.exec(String(message.headers.authorization));
    expect(auth?.[2]).toBe(vapidPublicKey);
    const claims = verifyVapidJwt(auth?.[1] ?? '', vapidPublicKey);
    expect(claims.aud).toBe(push.origin);
    expect(claims.sub).toMatch(/^(mailto:|https:)/);
    expect(Number(claims.exp)).toBeGreaterThan(Date.now() / 1000);

    const plaintext = ece.decrypt(message.body, {
      version: 'aes128gcm',
      privateKey: device.ecdh,
      authSecret: device.auth.toString('base64url'),
    }) as Buffer;
    const payload = JSON.parse(plaintext.toString('utf8'));
    expect(payload).toMatchObject({
      type: 'approval_request',
      approval_id: approvalId,
      url: `/approvals/${approvalId}`,
      title: 'Approve exec on pm1?',
    });
    // The arguments never travel in a notification.
    expect(plaintext.toString('utf8')).not.toContain('uname');
    await new Promise((r) => setTimeout(r, 300));
    expect(push.received.some((r) => r.path === '/push/rita')).toBe(false);
  });

  test('the VAPID key pair survives a restart', async () => {
    const before = (await asPerson(gw, admin, 'GET', '/api/push/vapid-public-key')).body.public_key;
    await ai.close();
    await gw.restart();
    const after = (await asPerson(gw, admin, 'GET', '/api/push/vapid-public-key')).body.public_key;
    expect(after).toBe(before);
  });
});
