import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createApp } from '../app';
import { openApprovals } from '../approvals/open-approvals';
import { createApiToken } from '../auth/create-api-token';
import { LocalCoordination } from '../coordination/local-coordination';
import type { GatewayDeps } from '../deps';
import { loadGatewayIdentity } from '../hub/gateway-identity';
import { LocalHub } from '../hub/local-hub';
import { TotpSeedCipher } from '../identity/totp-seed-cipher';
import { McpEndpoint } from '../mcp/mcp-endpoint';
import { toolHandlers } from '../mcp/tools';
import { createMailer } from '../notify/mailer';
import { ClientDocumentFetcher } from '../oauth/client-metadata-document';
import { openPolicyStore } from '../store/open-policy-store';
import { SqliteIdentityStore } from '../store/sqlite/sqlite-identity-store';
import { SqliteOAuthStore } from '../store/sqlite/sqlite-oauth-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { openTransferStore } from '../transfers/open-transfer-store';
import { openMachineNetworkStore } from '../wake/open-machine-network-store';
import { healthRoutes, type ReadinessCheck, shippedSqliteMigrations, sqliteMigrationsCheck } from './health';
import { createGatewayLogger, prettyLine } from './logger';
import { GatewayMetrics, metricsRoutes, PROMETHEUS_CONTENT_TYPE } from './metrics';

const gatewayIdentity = loadGatewayIdentity(
  join(mkdtempSync(join(tmpdir(), 'letkite-ops-test-')), 'gateway-identity.pem'),
);

/** The value of one sample in an exposition text, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) got[l[1] as string] = l[2] as string;
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe('health, readiness, metrics and request logs (through app.request)', () => {
  let store: SqliteStore;
  let app: ReturnType<typeof createApp>;
  let metrics: GatewayMetrics;
  let lines: string[];
  let draining: boolean;
  let readiness: ReadinessCheck[];
  let token: string;

  beforeEach(async () => {
    const clock = new Date('2026-12-01T10:00:00Z');
    store = new SqliteStore(':memory:');
    const { account, owner } = await store.bootstrap(clock.toISOString());
    const hub = new LocalHub();
    metrics = new GatewayMetrics({ agentsOnline: () => hub.onlineCount });
    lines = [];
    draining = false;
    const coordination = new LocalCoordination();
    const deps: GatewayDeps = {
      store,
      identity: new SqliteIdentityStore(store, new TotpSeedCipher(randomBytes(32))),
      policies: openPolicyStore(store),
      transfers: openTransferStore(store),
      machineNetworks: openMachineNetworkStore(store),
      mailer: createMailer({}),
      hub,
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
      metrics,
    };
    metrics.setSources({
      approvalsPending: async () =>
        (await deps.approvals.store.list(account.id, { status: 'pending', limit: 1000 })).length,
    });
    readiness = [
      { name: 'store', check: async () => void (await store.getUser('probe')) },
      sqliteMigrationsCheck(store.sqlite),
    ];
    const oauth = {
      store: new SqliteOAuthStore(store),
      clientDocuments: new ClientDocumentFetcher({ allowLoopback: false }),
    };
    app = createApp({
      ...deps,
      mcp: new McpEndpoint(deps, toolHandlers),
      oauth,
      logger: createGatewayLogger({ level: 'info', write: (l) => lines.push(l) }),
      readiness,
      draining: () => draining,
    });
    token = (
      await createApiToken(
        { store, now: clock },
        {
          accountId: account.id,
          userId: owner.id,
          name: 'ops',
          grant: { policy: 'full', machines: '*', scopes: '*' },
          actor: 'test',
        },
      )
    ).token;
  });
  afterEach(async () => store.close());

  test('/healthz answers 200 {status:"ok"} without a credential', async () => {
    const res = await app.request('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', version: 'test' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('/readyz is 200 while the store answers and every shipped migration is applied', async () => {
    const res = await app.request('/readyz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { store: 'ok', migrations: 'ok' } });
    expect(shippedSqliteMigrations().length).toBeGreaterThan(4);
  });

  test('/readyz is 503 naming the migrations when the database lost one (restored from an older copy)', async () => {
    const [latest] = store.sqlite
      .prepare('SELECT created_at FROM __drizzle_migrations_approvals ORDER BY created_at DESC LIMIT 1')
      .all() as { created_at: number }[];
    store.sqlite.prepare('DELETE FROM __drizzle_migrations_approvals WHERE created_at = ?').run(latest?.created_at);
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    const body = (await res.json()) as { status: string; failed: string[]; checks: Record<string, string> };
    expect(body).toEqual({
      status: 'unavailable',
      failed: ['migrations'],
      checks: { store: 'ok', migrations: 'fail' },
    });
  });

  test('/readyz is 503 naming the store when the database is gone, and says no more than that', async () => {
    await store.close();
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    const text = await res.text();
    const body = JSON.parse(text) as { failed: string[] };
    expect(body.failed).toContain('store');
    // No error text (paths, SQL) reaches an unauthenticated caller.
    expect(text).not.toMatch(/database|sqlite|connection|not open/i);
    store = new SqliteStore(':memory:');
  });

  test('/readyz is 503 once shutdown began, and a slow check counts as failed', async () => {
    draining = true;
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { failed: string[] }).failed).toEqual(['shutdown']);

    const slow = healthRoutes({
      version: 'x',
      checks: [{ name: 'hub', check: () => new Promise((r) => setTimeout(r, 500)) }],
      timeoutMs: 50,
    });
    const r2 = await slow.request('/readyz');
    expect(r2.status).toBe(503);
    expect(await r2.json()).toMatchObject({ failed: ['hub'] });
  });

  test('/metrics is not served on the public app; its own routes give the Prometheus text', async () => {
    expect((await app.request('/metrics')).status).toBe(404);
    await app.request('/healthz');
    await app.request('/api/no-such-thing');
    const res = await metricsRoutes(metrics).request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
    const text = await res.text();
    expect(sample(text, 'letkite_http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(1);
    expect(sample(text, 'letkite_http_request_duration_seconds_count', { route: '/healthz' })).toBe(1);
    expect(sample(text, 'letkite_http_request_duration_seconds_bucket', { route: '/healthz', le: '+Inf' })).toBe(1);
    expect(sample(text, 'letkite_agents_online')).toBe(0);
    expect(sample(text, 'letkite_approvals_pending')).toBe(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(1_000_000);
    expect(sample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE letkite_tool_call_duration_seconds histogram');
  });

  test('an MCP tool call is counted by tool and outcome, and the request line carries no token', async () => {
    const headers = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-request-id': 'req-42',
    };
    const init = await app.request('/mcp?access_token=lk_in_the_query', {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(init.status).toBe(200);
    await init.text();
    const session = init.headers.get('mcp-session-id') as string;
    const withSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
    await (
      await app.request('/mcp', {
        method: 'POST',
        headers: withSession,
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      })
    ).text();
    const call = await app.request('/mcp', {
      method: 'POST',
      headers: withSession,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'exec', arguments: { machine: 'no-such-machine', command: 'true' } },
      }),
    });
    expect(call.status).toBe(200);
    expect(await call.text()).toContain('machine_not_found');
    expect(call.headers.get('x-request-id')).toBe('req-42');

    const text = await metrics.render();
    expect(sample(text, 'letkite_tool_calls_total', { tool: 'exec', outcome: 'machine_not_found' })).toBe(1);
    expect(sample(text, 'letkite_tool_call_duration_seconds_count', { tool: 'exec' })).toBe(1);
    expect(sample(text, 'letkite_http_requests_total', { method: 'POST', route: '/mcp', status: '200' })).toBe(2);
    expect(sample(text, 'letkite_http_requests_total', { method: 'POST', route: '/mcp', status: '202' })).toBe(1);

    const requestLines = lines.filter((l) => l.startsWith('request '));
    expect(requestLines.length).toBe(3);
    expect(requestLines[0]).toMatch(/req_id=req-42 method=POST route=\/mcp status=200 duration_ms=[0-9.]+$/);
    for (const l of lines) {
      expect(l).not.toContain(token);
      expect(l).not.toContain('lk_in_the_query');
      expect(l).not.toContain('no-such-machine');
    }
  });

  test('probe requests are counted but logged at debug only', async () => {
    await app.request('/healthz');
    await app.request('/readyz');
    expect(lines.filter((l) => l.startsWith('request '))).toEqual([]);
    const text = await metrics.render();
    expect(sample(text, 'letkite_http_requests_total', { route: '/readyz', status: '200' })).toBe(1);
  });

  test('a request id a client made up is kept only when it is short and plain', async () => {
    const odd = await app.request('/healthz', { headers: { 'x-request-id': 'a b"c{}' } });
    expect(odd.headers.get('x-request-id')).not.toBe('a b"c{}');
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('the pretty format puts the level in front unless it is info, and never the pino bookkeeping', () => {
    expect(prettyLine('{"level":"info","time":"t","pid":1,"name":"gateway","msg":"listening on x"}')).toBe(
      'listening on x',
    );
    expect(prettyLine('{"level":"warn","msg":"slow","ms":3}')).toBe('WARN slow ms=3');
  });

  test('fields that would carry a secret are redacted even if a caller logs them by mistake', () => {
    const got: string[] = [];
    const logger = createGatewayLogger({ level: 'info', write: (l) => got.push(l) });
    logger.info({ token: 'lk_secret', headers: { cookie: 'sid=1' }, ok: 1 }, 'oops');
    expect(got.join('\n')).not.toMatch(/lk_secret|sid=1/);
  });
});
