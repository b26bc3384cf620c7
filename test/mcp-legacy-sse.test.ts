import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type TestAgent, TestGateway } from './support/letkite';
import { runCliCommand, waitFor } from './support/processes';

async function sseClient(url: string, token: string): Promise<Client> {
  const transport = new SSEClientTransport(new URL('/mcp/sse', url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'old-sse-client', version: '0.9.0' });
  await client.connect(transport);
  return client;
}

/** Opens the stream by hand and returns the message path its first event names (and a way to close it). */
async function openStream(url: string, token: string): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const res = await fetch(new URL('/mcp/sse', url), {
    headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const r = await reader.read();
    if (r.done) break;
    text += new TextDecoder().decode(r.value);
  }
  const endpoint = /event: endpoint\ndata: (.+)\n/.exec(text)?.[1];
  expect(endpoint).toMatch(/^\/mcp\/message\?sessionId=mcs_/);
  return { endpoint: endpoint as string, close: () => reader.cancel() };
}

describe('the legacy HTTP+SSE transport (GET /mcp/sse + POST /mcp/message)', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let token: string;

  const setSwitch = async (on: boolean) => {
    const r = await runCliCommand(['admin', 'account', 'set', '--legacy-sse', on ? 'on' : 'off'], gw.cliEnv);
    expect(r.code, r.stderr).toBe(0);
  };

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('sse-box');
    token = await gw.apiToken('sse');
  }, 180_000);

  afterAll(async () => {
    await agent?.dispose();
    await gw?.dispose();
  });

  test('off by default: refused with 403 forbidden naming the switch, and the SDK client cannot connect', async () => {
    const res = await fetch(new URL('/mcp/sse', gw.url), { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { code: string; details: Record<string, unknown> } };
    expect(body.error.code).toBe('forbidden');
    expect(body.error.details).toMatchObject({ layer: 'account', switch: 'legacy_sse' });
    await expect(sseClient(gw.url, token)).rejects.toThrow(/403/);
  });

  test('without a bearer token: 401 with the OAuth challenge, as on /mcp', async () => {
    await setSwitch(true);
    const res = await fetch(new URL('/mcp/sse', gw.url));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  test('switched on: the SDK SSE client lists tools, calls exec and reads a resource', async () => {
    await setSwitch(true);
    const client = await sseClient(gw.url, token);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['machines_list', 'exec']));
      await waitFor('sse-box online', async () => {
        const r = await client.callTool({ name: 'machines_list', arguments: {} });
        const machines = (r.structuredContent as { machines: { name: string; online: boolean }[] }).machines;
        return machines.some((m) => m.name === 'sse-box' && m.online);
      });
      const r = await client.callTool({ name: 'exec', arguments: { machine: 'sse-box', command: 'echo over-sse' } });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ stdout: 'over-sse\n', exit_code: 0 });
      const machines = await client.readResource({ uri: 'letkite://machines' });
      expect((machines.contents[0] as { text: string }).text).toContain('sse-box');
    } finally {
      await client.close();
    }
  });

  test("another credential cannot post into a stream's session, and one that was never opened is 404", async () => {
    await setSwitch(true);
    const other = await gw.apiToken('sse-other');
    const stream = await openStream(gw.url, token);
    try {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      };
      const post = (t: string, path: string) =>
        fetch(new URL(path, gw.url), {
          method: 'POST',
          headers: { Authorization: `Bearer ${t}`, 'content-type': 'application/json' },
          body: JSON.stringify(initialize),
        });
      expect((await post(other, stream.endpoint)).status).toBe(404);
      expect((await post(token, '/mcp/message?sessionId=mcs_nope')).status).toBe(404);
      expect((await post(token, stream.endpoint)).status).toBe(202);
    } finally {
      await stream.close();
    }
  });

  test('switching it off stops an open stream at its next request', async () => {
    await setSwitch(true);
    const client = await sseClient(gw.url, token);
    try {
      await client.listTools();
      await setSwitch(false);
      await expect(client.listTools()).rejects.toThrow(/403/);
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});
