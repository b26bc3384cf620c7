import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { asPerson, type TestPerson } from './support/approvals';
import { TestCluster } from './support/cluster';
import { type TestAgent, TestGateway } from './support/letkite';
import { CliProcess, freePort, removeDir } from './support/processes';

const IDLE_MS = 6000;
// Both gateways run in cluster mode: one fresh PostgreSQL database, the real NATS (JetStream) on 127.0.0.1:4222
// under a prefix of their own, one data directory (test/support/cluster.ts).

/**
 * An MCP client whose `initialize` goes to one gateway and every later request to another, as behind a load
 * balancer without session affinity.
 */
async function splitClient(first: string, then: string, token: string, name = 'two-gateways-test') {
  let initialized = false;
  const seen: string[] = [];
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', first), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const target = new URL(url.pathname + url.search, initialized ? then : first);
      seen.push(target.origin);
      initialized = true;
      return fetch(target, init);
    },
  });
  const client = new Client({ name, version: '2.3.4' });
  await client.connect(transport);
  return { client, transport, seen };
}

/** A raw tools/list with a session id, to read the status a gateway answers. */
async function listWith(url: string, token: string, sessionId: string): Promise<number> {
  const res = await fetch(new URL('/mcp', url), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await res.body?.cancel();
  return res.status;
}

describe('MCP sessions in the store: two gateway processes on one database and one NATS', () => {
  let a: TestGateway;
  let b: CliProcess;
  let bUrl: string;
  let cluster: TestCluster;
  let owner: TestPerson;
  let agent: TestAgent;

  beforeAll(async () => {
    cluster = await TestCluster.create('letkite_mcp_sessions');
    a = await TestGateway.start({ LETKITE_MCP_SESSION_IDLE_MS: String(IDLE_MS), ...cluster.env });
    const port = await freePort();
    bUrl = `http://localhost:${port}`;
    b = new CliProcess(['gateway'], {
      LETKITE_PORT: String(port),
      LETKITE_HEARTBEAT_MS: '1000',
      LETKITE_MCP_SESSION_IDLE_MS: String(IDLE_MS),
      ...cluster.env,
    });
    await b.waitForOutput(/listening on/, 60_000);
    owner = await cluster.owner();
    agent = await a.addAgent('held-by-a');
  }, 120_000);

  afterAll(async () => {
    await agent?.dispose();
    await b?.stop();
    await a?.dispose();
    await cluster?.dispose();
    if (cluster) removeDir(cluster.dataDir);
  });

  const sessionRow = async (id: string) =>
    (
      await cluster.query<{
        credential_id: string;
        client_name: string;
        client_version: string;
        closed_at: string | null;
      }>('SELECT * FROM mcp_sessions WHERE id = $1', [id])
    )[0];

  test('a session initialized on one gateway is served by the other, which knows the client it declared', async () => {
    const token = await a.apiToken('split');
    // Made first: a CLI run can take longer than the idle time on a busy machine.
    const other = await a.apiToken('other');
    const { client, transport, seen } = await splitClient(a.url, bUrl, token);
    const sessionId = transport.sessionId as string;
    expect(sessionId).toMatch(/^mcs_/);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('exec');
    const listed = await client.callTool({ name: 'machines_list', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect(new Set(seen)).toEqual(new Set([new URL(a.url).origin, new URL(bUrl).origin]));
    expect(seen.slice(1).every((o) => o === new URL(bUrl).origin)).toBe(true);
    expect(await sessionRow(sessionId)).toMatchObject({ client_name: 'two-gateways-test', client_version: '2.3.4' });
    // Another credential cannot use the session id.
    expect(await listWith(bUrl, other, sessionId)).toBe(404);
    expect(await listWith(a.url, token, 'mcs_made-up')).toBe(404);
    // DELETE on B ends it for A too.
    await transport.terminateSession();
    expect((await sessionRow(sessionId))?.closed_at).not.toBeNull();
    expect(await listWith(a.url, token, sessionId)).toBe(404);
    await client.close();
  });

  test('a session unused for longer than the idle time answers 404 on both gateways; a used one lives on', async () => {
    const token = await a.apiToken('idle');
    const idle = await splitClient(a.url, bUrl, token);
    const busy = await splitClient(bUrl, a.url, token);
    const idleId = idle.transport.sessionId as string;
    const busyId = busy.transport.sessionId as string;
    expect(await listWith(bUrl, token, idleId)).toBe(200);
    const until = Date.now() + IDLE_MS + 1500;
    while (Date.now() < until) {
      expect(await listWith(Date.now() % 2 ? a.url : bUrl, token, busyId)).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(await listWith(a.url, token, idleId)).toBe(404);
    expect(await listWith(bUrl, token, idleId)).toBe(404);
    expect(await listWith(a.url, token, busyId)).toBe(200);
    await idle.client.close();
    await busy.client.close();
  });

  test("revoking a person's sessions on one gateway closes their MCP sessions: 404 on both, the token still works", async () => {
    const token = await a.apiToken('sign-out-everywhere');
    const { client, transport } = await splitClient(bUrl, a.url, token);
    const sessionId = transport.sessionId as string;
    expect(await listWith(a.url, token, sessionId)).toBe(200);
    const sessions = await asPerson(a, owner, 'GET', '/api/me/sessions');
    const web = (sessions.body.sessions as { id: string }[])[0] as { id: string };
    const revoked = await asPerson(a, owner, 'DELETE', `/api/me/sessions/${web.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.closed_mcp_sessions).toBeGreaterThanOrEqual(1);
    expect(await listWith(a.url, token, sessionId)).toBe(404);
    expect(await listWith(bUrl, token, sessionId)).toBe(404);
    // The API token itself was not revoked: a new session works.
    const again = await splitClient(bUrl, a.url, token);
    expect((await again.client.listTools()).tools.length).toBeGreaterThan(0);
    await again.client.close();
    await client.close();
    owner = await cluster.owner();
  });

  test('revoking a token on one gateway closes its sessions, refuses it on both, and aborts its running call', async () => {
    const token = await a.apiToken('revoked');
    const tokenId = (await cluster.query<{ id: string }>("SELECT id FROM api_tokens WHERE name = 'revoked'"))[0]?.id;
    // Served by A, which holds the agent's socket.
    const { client, transport } = await splitClient(bUrl, a.url, token);
    const sessionId = transport.sessionId as string;
    const started = Date.now();
    const running = client
      .callTool({ name: 'exec', arguments: { machine: 'held-by-a', command: 'sleep 30', timeout_s: 60 } }, undefined, {
        timeout: 60_000,
      })
      .then(
        (r) => ({ isError: r.isError === true }),
        () => ({ isError: true }),
      );
    await new Promise((r) => setTimeout(r, 1500));
    const revoked = await asPerson(a, owner, 'DELETE', `/api/tokens/${tokenId}`);
    expect(revoked.status).toBe(200);
    const outcome = await running;
    expect(outcome.isError).toBe(true);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await sessionRow(sessionId))?.closed_at).not.toBeNull();
    expect(await listWith(a.url, token, sessionId)).toBe(401);
    expect(await listWith(bUrl, token, sessionId)).toBe(401);
    await client.close().catch(() => undefined);
  });

  test('a token revoked through the other gateway aborts the call running on this one', async () => {
    const token = await a.apiToken('revoked-elsewhere');
    const tokenId = (
      await cluster.query<{ id: string }>("SELECT id FROM api_tokens WHERE name = 'revoked-elsewhere'")
    )[0]?.id;
    // The call runs on A (it holds the agent's socket); the revocation goes through B's web API.
    const { client } = await splitClient(a.url, a.url, token);
    const started = Date.now();
    const running = client
      .callTool({ name: 'exec', arguments: { machine: 'held-by-a', command: 'sleep 30', timeout_s: 60 } }, undefined, {
        timeout: 60_000,
      })
      .then(
        (r) => ({ isError: r.isError === true }),
        () => ({ isError: true }),
      );
    await new Promise((r) => setTimeout(r, 1500));
    const bAsGateway = { url: bUrl } as TestGateway;
    const revoked = await asPerson(bAsGateway, owner, 'DELETE', `/api/tokens/${tokenId}`);
    expect(revoked.status).toBe(200);
    expect((await running).isError).toBe(true);
    expect(Date.now() - started).toBeLessThan(15_000);
    await client.close().catch(() => undefined);
  });
});
