import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type TestAgent, TestGateway } from './support/letkite';
import { cliMain, repoRoot } from './support/processes';

describe('letkite mcp: a stdio client reaches the gateway through the bridge', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let client: Client;
  let transport: StdioClientTransport;

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('bridged');
    const token = await gw.apiToken('bridge');
    transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', cliMain, 'mcp'],
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/', LETKITE_URL: gw.url, LETKITE_TOKEN: token },
      stderr: 'pipe',
    });
    client = new Client({ name: 'bridge-test', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
  });

  test('lists tools and runs exec, with progress and structured results relayed', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['machines_list', 'exec', 'exec_many']));
    const r = await client.callTool({ name: 'exec', arguments: { machine: 'bridged', command: 'echo via-stdio' } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ stdout: 'via-stdio\n', exit_code: 0 });
    // Watch the transport itself: the SDK client may drop a progress notification that arrives in the same read
    // as its response (it handles notifications a microtask later), which is not what this test is about.
    const relayed: unknown[] = [];
    const deliver = transport.onmessage;
    transport.onmessage = (message) => {
      if ('method' in message && message.method === 'notifications/progress') relayed.push(message.params);
      deliver?.(message);
    };
    const many = await client.callTool(
      { name: 'exec_many', arguments: { machines: ['bridged'], command: 'true' } },
      undefined,
      { onprogress: () => {} },
    );
    expect(many.isError).toBeFalsy();
    expect(relayed).toEqual([expect.objectContaining({ progress: 1, total: 1 })]);
  });

  test('a refused call arrives as a tool error with its code', async () => {
    const r = await client.callTool({ name: 'exec', arguments: { machine: 'nowhere', command: 'true' } });
    expect(r.isError).toBe(true);
    const text = (r.content as { type: string; text: string }[])[0]?.text ?? '{}';
    expect(JSON.parse(text).code).toBe('machine_not_found');
  });
});
