import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROTOCOL_VERSION } from '@letkite/protocol';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createApp } from './app';
import { openApprovals } from './approvals/open-approvals';
import { createApiToken } from './auth/create-api-token';
import { LocalCoordination } from './coordination/local-coordination';
import type { GatewayDeps } from './deps';
import { loadGatewayIdentity } from './hub/gateway-identity';
import { LocalHub } from './hub/local-hub';
import { TotpSeedCipher } from './identity/totp-seed-cipher';
import { createJoinToken } from './machines/create-join-token';
import { McpEndpoint } from './mcp/mcp-endpoint';
import { toolHandlers } from './mcp/tools';
import { createMailer } from './notify/mailer';
import { ClientDocumentFetcher } from './oauth/client-metadata-document';
import { openPolicyStore } from './store/open-policy-store';
import { SqliteIdentityStore } from './store/sqlite/sqlite-identity-store';
import { SqliteOAuthStore } from './store/sqlite/sqlite-oauth-store';
import { SqliteStore } from './store/sqlite/sqlite-store';
import { openTransferStore } from './transfers/open-transfer-store';

const info = { hostname: 'h1', os: 'linux', arch: 'x64', version: '0.1.0', protocol: PROTOCOL_VERSION };
const publicKey = () =>
  generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64');

const gatewayIdentity = loadGatewayIdentity(
  join(mkdtempSync(join(tmpdir(), 'letkite-app-test-')), 'gateway-identity.pem'),
);

describe('gateway HTTP routes', () => {
  let store: SqliteStore;
  let app: ReturnType<typeof createApp>;
  let account: { id: string };
  let owner: { id: string };
  let clock = new Date('2026-11-30T10:00:00Z');

  beforeEach(async () => {
    clock = new Date('2026-11-30T10:00:00Z');
    store = new SqliteStore(':memory:');
    ({ account, owner } = await store.bootstrap(clock.toISOString()));
    const coordination = new LocalCoordination();
    const deps: GatewayDeps = {
      store,
      identity: new SqliteIdentityStore(store, new TotpSeedCipher(randomBytes(32))),
      policies: openPolicyStore(store),
      transfers: openTransferStore(store),
      mailer: createMailer({}),
      hub: new LocalHub(),
      approvals: openApprovals({
        store,
        coordination,
        mailer: createMailer({}),
        publicUrl: 'http://localhost:1',
        now: () => clock,
        log: () => {},
      }),
      coordination,
      now: () => clock,
      log: () => {},
      publicUrl: 'http://localhost:1',
      version: 'test',
      gatewayIdentity,
    };
    const oauth = {
      store: new SqliteOAuthStore(store),
      clientDocuments: new ClientDocumentFetcher({ allowLoopback: false }),
    };
    app = createApp({ ...deps, mcp: new McpEndpoint(deps, toolHandlers), oauth });
  });
  afterEach(async () => store.close());

  const enroll = (body: unknown) =>
    app.request('/agent/v1/enroll', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  test('a join token enrolls one machine and is spent', async () => {
    const { token } = await createJoinToken({ store, now: clock }, { accountId: account.id, actor: 'test' });
    const first = await enroll({ join_token: token, public_key: publicKey(), info });
    expect(first.status).toBe(200);
    const body = (await first.json()) as { machine_id: string; name: string };
    expect(body.name).toBe('h1');
    expect(await store.getMachine(body.machine_id)).toMatchObject({ hostname: 'h1', os: 'linux' });
    const second = await enroll({ join_token: token, public_key: publicKey(), info });
    expect(second.status).toBe(401);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('invalid_token');
  });

  test('an expired join token is refused like an unknown one', async () => {
    const { token } = await createJoinToken(
      { store, now: clock },
      { accountId: account.id, actor: 'test', ttlMs: 1000 },
    );
    clock = new Date(clock.getTime() + 2000);
    const res = await enroll({ join_token: token, public_key: publicKey(), info });
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'invalid_token',
      message: 'the join token is unknown, already used or expired',
    });
  });

  test('a key that is not Ed25519 is invalid_params', async () => {
    const { token } = await createJoinToken({ store, now: clock }, { accountId: account.id, actor: 'test' });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' });
    const res = await enroll({ join_token: token, public_key: rsa.toString('base64'), info });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_params');
  });

  test('a malformed enrollment body is invalid_params', async () => {
    const res = await enroll({ nonsense: true });
    expect(res.status).toBe(400);
  });

  test('every enrollment and token creation is in the audit log, without secrets', async () => {
    const { token } = await createJoinToken({ store, now: clock }, { accountId: account.id, actor: 'test' });
    await enroll({ join_token: token, public_key: publicKey(), info });
    const api = await createApiToken(
      { store, now: clock },
      {
        accountId: account.id,
        userId: owner.id,
        name: 'ci',
        grant: { policy: 'full', machines: '*', scopes: '*' },
        actor: 'test',
      },
    );
    const events = await store.listAudit(account.id, { limit: 10 });
    expect(events.map((e) => e.action)).toEqual(
      expect.arrayContaining(['join_token.create', 'machine.enroll', 'api_token.create']),
    );
    const dump = JSON.stringify(events);
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(api.token);
  });

  test('/mcp without a valid bearer is 401 with WWW-Authenticate', async () => {
    const res = await app.request('/mcp', { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('Bearer');
  });

  test('/mcp with an unknown session id is 404', async () => {
    const api = await createApiToken(
      { store, now: clock },
      {
        accountId: account.id,
        userId: owner.id,
        name: 'ci',
        grant: { policy: 'full', machines: '*', scopes: '*' },
        actor: 'test',
      },
    );
    const res = await app.request('/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${api.token}`,
        'mcp-session-id': 'nope',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
  });
});
