import { existsSync } from 'node:fs';
import { PROTOCOL_VERSION } from '@letkite/protocol';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { expectNoProcessMatching, pause } from './support/leftover-processes';
import { callTool, machineOnline, mcpClient, RUN_AS, type TestAgent, TestGateway } from './support/letkite';
import { runCliCommand, tempDir } from './support/processes';

interface ExecOut {
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  truncated: boolean;
  duration_ms: number;
}

describe('an MCP client runs commands through a real gateway and agent', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let token: string;
  let client: Client;

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('box1');
    token = await gw.apiToken();
    client = await mcpClient(gw.url, token);
  });

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
  });

  test('machines_list shows the enrolled machine online with its OS', async () => {
    const r = await callTool<{ machines: { name: string; online: boolean; os: string; arch: string }[] }>(
      client,
      'machines_list',
      {},
    );
    expect(r.ok).toBe(true);
    expect(r.data.machines).toHaveLength(1);
    expect(r.data.machines[0]).toMatchObject({ name: 'box1', online: true, os: process.platform, arch: process.arch });
  });

  test('tools/list publishes the validating schemas', async () => {
    const { tools } = await client.listTools();
    const exec = tools.find((t) => t.name === 'exec');
    expect(exec?.inputSchema.properties).toHaveProperty('command');
    expect(exec?.inputSchema.required).toEqual(['machine']);
    // exec can wait for a human, so its output is the result or a pending approval.
    const shapes =
      (exec?.outputSchema as { anyOf?: { properties?: Record<string, unknown> }[] } | undefined)?.anyOf ?? [];
    expect(shapes.some((s) => s.properties && 'exit_code' in s.properties)).toBe(true);
    expect(shapes.some((s) => s.properties && 'approval_id' in s.properties)).toBe(true);
    expect(exec?.annotations?.readOnlyHint).toBe(false);
  });

  test('exec of echo hello returns hello and exit code 0', async () => {
    const r = await callTool<ExecOut>(client, 'exec', { machine: 'box1', command: 'echo hello' });
    expect(r.data).toMatchObject({ stdout: 'hello\n', stderr: '', exit_code: 0, signal: null, timed_out: false });
  });

  test('a failing command returns its exit code and stderr', async () => {
    const r = await callTool<ExecOut>(client, 'exec', { machine: 'box1', command: 'echo oops >&2; exit 7' });
    expect(r.data).toMatchObject({ exit_code: 7, stderr: 'oops\n' });
  });

  test('argv runs without a shell, with cwd, env and stdin', async () => {
    const dir = tempDir('cwd');
    const r = await callTool<ExecOut>(client, 'exec', {
      machine: 'box1',
      argv: ['/bin/sh', '-c', 'pwd; echo "$GREETING"; cat'],
      cwd: dir,
      env: { GREETING: 'hi $HOME' },
      stdin: 'from stdin',
    });
    expect(r.data.stdout).toBe(`${dir}\nhi $HOME\nfrom stdin`);
    const literal = await callTool<ExecOut>(client, 'exec', { machine: 'box1', argv: ['echo', '$(id)', ';', 'ls'] });
    expect(literal.data.stdout).toBe('$(id) ; ls\n');
  });

  test('a missing program is exit code 127, not a failed call', async () => {
    const r = await callTool<ExecOut>(client, 'exec', { machine: 'box1', argv: ['/nonexistent/prog'] });
    expect(r.ok).toBe(true);
    expect(r.data.exit_code).toBe(127);
  });

  test('a command past its timeout is killed with its whole process group and reported', async () => {
    const marker = tempDir('timeout');
    // The background child would write its marker 2 s in, after the 1 s timeout: only a group kill stops it.
    // `started` shows the command can write there at all, so a missing `child-survived` means something.
    const r = await callTool<ExecOut>(client, 'exec', {
      machine: 'box1',
      command: `touch ${marker}/started; (sleep 2; touch ${marker}/child-survived) & sleep 30`,
      timeout_s: 1,
    });
    expect(r.data.timed_out).toBe(true);
    expect(r.data.signal).toBe('SIGTERM');
    expect(r.data.duration_ms).toBeLessThan(10_000);
    await expectNoProcessMatching(client, 'box1', `sleep 2; touch ${marker}`);
    await pause(2500);
    expect(existsSync(`${marker}/started`)).toBe(true);
    expect(existsSync(`${marker}/child-survived`)).toBe(false);
  });

  test('output over the cap keeps the newest part and says it was truncated', async () => {
    const r = await callTool<ExecOut>(client, 'exec', { machine: 'box1', command: 'seq 1 400000; echo END' });
    expect(r.data.truncated).toBe(true);
    expect(r.data.stdout.endsWith('400000\nEND\n')).toBe(true);
  });

  test('invalid arguments are refused with invalid_params', async () => {
    const both = await callTool(client, 'exec', { machine: 'box1', command: 'true', argv: ['true'] });
    expect(both.error?.code).toBe('invalid_params');
    const bad = await callTool(client, 'exec', { machine: 'box1', command: 'true', timeout_s: 'soon' });
    expect(bad.error?.code).toBe('invalid_params');
  });

  test('an unknown machine is machine_not_found', async () => {
    const r = await callTool(client, 'exec', { machine: 'nope', command: 'true' });
    expect(r.error?.code).toBe('machine_not_found');
  });

  test('a bad or missing token gets 401 with WWW-Authenticate', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
    for (const headers of [{}, { Authorization: 'Bearer lk_not-a-real-token' }] as Record<string, string>[]) {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    }
  });

  test('an expired token gets 401', async () => {
    const short = await gw.apiToken('short', ['--expires', '1s']);
    await new Promise((r) => setTimeout(r, 1500));
    await expect(mcpClient(gw.url, short)).rejects.toThrow();
  });

  test('a join token works once; reused, expired or wrong tokens are refused', async () => {
    const joinArgs = (name: string) => {
      const dir = tempDir(name);
      return ['agent', 'join', gw.url, '-', '--state-dir', dir, '--ceiling', `${dir}/ceiling.toml`, ...RUN_AS];
    };
    const join = await gw.joinToken();
    const first = await runCliCommand(joinArgs('j1'), {}, join);
    expect(first.code).toBe(0);
    const again = await runCliCommand(joinArgs('j2'), {}, join);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('invalid_token');
    const wrong = await runCliCommand(joinArgs('j3'), {}, 'lkj_wrong');
    expect(wrong.stderr).toContain('invalid_token');
    const expiring = await gw.joinToken(['--ttl', '1s']);
    await new Promise((r) => setTimeout(r, 1500));
    const late = await runCliCommand(joinArgs('j4'), {}, expiring);
    expect(late.stderr).toContain('invalid_token');
  });

  test('a malformed or oversized agent frame closes that socket and the gateway keeps serving others', async () => {
    const wsUrl = `${gw.url.replace('http', 'ws')}/agent/v1`;
    const closeCode = (send: (ws: WebSocket) => void) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(wsUrl);
        ws.once('message', () => send(ws));
        ws.once('close', (code) => resolve(code));
        ws.once('error', reject);
      });
    expect(await closeCode((ws) => ws.send('{not json'))).toBe(1008);
    expect(await closeCode((ws) => ws.send(JSON.stringify({ type: 'auth', machine_id: 'x' })))).toBe(1008);
    expect(await closeCode((ws) => ws.send('x'.repeat(1024 * 1024 + 10)))).toBe(1009);
    const r = await callTool<ExecOut>(client, 'exec', { machine: 'box1', command: 'echo still here' });
    expect(r.data.stdout).toBe('still here\n');
  });

  test('a forged agent signature is refused', async () => {
    const machines = await callTool<{ machines: { id: string }[] }>(client, 'machines_list', {});
    const id = machines.data.machines[0]?.id ?? '';
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/agent/v1`);
      ws.once('message', () =>
        ws.send(
          JSON.stringify({
            type: 'auth',
            machine_id: id,
            nonce: 'n'.repeat(43),
            signature: Buffer.alloc(64).toString('base64'),
            info: { hostname: 'evil', os: 'linux', arch: 'x64', version: '1', protocol: PROTOCOL_VERSION },
          }),
        ),
      );
      ws.once('close', (c) => resolve(c));
    });
    expect(code).toBe(4401);
    await machineOnline(client, 'box1');
  });

  test('killing and restarting the agent brings the machine back online', async () => {
    await agent.stop('SIGKILL');
    await machineOnline(client, 'box1', false);
    const r = await callTool(client, 'exec', { machine: 'box1', command: 'true' });
    expect(r.error?.code).toBe('machine_offline');
    await agent.start();
    await machineOnline(client, 'box1');
  });

  test('restarting the gateway makes the agent reconnect by itself', async () => {
    await client.close();
    await gw.restart();
    client = await mcpClient(gw.url, token);
    await machineOnline(client, 'box1');
    const r = await callTool<ExecOut>(client, 'exec', { machine: 'box1', command: 'echo back' });
    expect(r.data.stdout).toBe('back\n');
  });
});
