import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { asPerson, TestAccount, TestMailbox, type TestPerson, totpCode } from './support/approvals';
import { callTool, FULL_SHELL_CEILING, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { cliMain, removeDir, repoRoot, tempDir } from './support/processes';

/** The `ops` policy: `echo` allowed, `touch` needs a human; `rule` is the echo rule's verdict. */
const opsPolicy = (echo: 'allow' | 'deny', note = '') => `# ops ${note}
name = "ops"
shell = "full"
files = [ { path = "*", access = "rw" } ]

[commands]
default = "deny"
rules = [ { match = "echo *", verdict = "${echo}" }, { match = "touch *", verdict = "approve" } ]

[approval]
approvers = "any_admin"
`;

interface Pending {
  status: 'pending_approval';
  approval_id: string;
}

describe('account policies: edits apply to the next call, approvals bind the version, switches stop sessions', () => {
  let gw: TestGateway;
  let mailbox: TestMailbox;
  let account: TestAccount;
  let agent: TestAgent;
  let owner: TestPerson;
  let admin: TestPerson;
  let ai: Client;
  let tokenId: string;
  let token: string;
  const work = tempDir('policies-work');

  beforeAll(async () => {
    mailbox = await TestMailbox.start();
    gw = await TestGateway.start(mailbox.env);
    agent = await gw.addAgent('m1', { ceiling: FULL_SHELL_CEILING });
    account = await TestAccount.open(gw);
    owner = await account.person('Olivia', 'owner');
    admin = await account.person('Adam', 'admin');
  });

  afterAll(async () => {
    await ai?.close().catch(() => {});
    await account?.close();
    await agent?.dispose();
    await gw?.dispose();
    await mailbox?.stop();
    removeDir(work);
  });

  test('a policy created over REST is chosen by name for a token; the MCP client runs what it allows', async () => {
    const created = await asPerson(gw, owner, 'POST', '/api/policies', { source: opsPolicy('allow') });
    expect(created.status).toBe(201);
    const made = await asPerson(gw, owner, 'POST', '/api/tokens', { name: 'ai', policy: 'ops', scopes: '*' });
    expect(made.status).toBe(200);
    ({ id: tokenId, token } = made.body as { id: string; token: string });
    ai = await mcpClient(gw.url, token);
    await machineOnline(ai, 'm1');
    const r = await callTool<{ stdout: string }>(ai, 'exec', { machine: 'm1', command: 'echo policy-v1' });
    expect(r.error).toBeUndefined();
    expect(r.data.stdout).toBe('policy-v1\n');
  });

  test('after an update that denies it, the very next call of the open session is refused', async () => {
    const updated = await asPerson(gw, owner, 'PUT', '/api/policies/ops', { source: opsPolicy('deny'), version: 1 });
    expect((updated.body.policy as { version: number }).version).toBe(2);
    const r = await callTool(ai, 'exec', { machine: 'm1', command: 'echo policy-v2' });
    expect(r.error?.code).toBe('blocked_by_policy');
    expect(JSON.stringify(r.error?.details)).toContain('echo *');
  });

  test('an approval made under one version is asked again under the next', async () => {
    const target = join(work, 'approved-under-v2');
    const call = { machine: 'm1', command: `touch ${target}` };
    const first = (await callTool<Pending>(ai, 'exec', call)).data;
    expect(first.status).toBe('pending_approval');
    const approved = await asPerson(gw, admin, 'POST', `/api/approvals/${first.approval_id}/approve`, {
      method: 'totp',
      code: await totpCode(admin),
    });
    expect(approved.status).toBe(200);

    // The owner edits the policy (a comment only) before the AI repeats the call: v3 asks again.
    await asPerson(gw, owner, 'PUT', '/api/policies/ops', { source: opsPolicy('deny', 'reviewed'), version: 2 });
    const again = (await callTool<Pending>(ai, 'exec', call)).data;
    expect(again.status).toBe('pending_approval');
    expect(again.approval_id).not.toBe(first.approval_id);
    expect(existsSync(target)).toBe(false);

    // Approved under v3, the call runs once.
    await asPerson(gw, admin, 'POST', `/api/approvals/${again.approval_id}/approve`, {
      method: 'totp',
      code: await totpCode(admin),
    });
    const ran = await callTool<{ exit_code: number }>(ai, 'exec', call);
    expect(ran.error).toBeUndefined();
    expect(ran.data.exit_code).toBe(0);
    expect(existsSync(target)).toBe(true);
  });

  test('delete is refused while the token uses the policy, naming it and its owner', async () => {
    const refused = await asPerson(gw, owner, 'DELETE', '/api/policies/ops');
    expect(refused.status).toBe(409);
    const error = refused.body.error as { code: string; message: string; details: { used_by: { id: string }[] } };
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('"ai" of Olivia');
    expect(error.details.used_by.map((u) => u.id)).toEqual([tokenId]);
  });

  test('a tool group switched off for the account leaves tools/list and is refused', async () => {
    const before = (await ai.listTools()).tools.map((t) => t.name);
    expect(before).toContain('exec');
    const off = await asPerson(gw, owner, 'PUT', '/api/account/settings', { disabled_tool_groups: ['commands'] });
    expect(off.status).toBe(200);
    const after = (await ai.listTools()).tools.map((t) => t.name);
    expect(after).not.toContain('exec');
    expect(after).toContain('read_file');
    const r = await callTool(ai, 'exec', { machine: 'm1', command: 'echo x' });
    expect(r.error).toMatchObject({ code: 'blocked_by_policy', details: { layer: 'account', group: 'commands' } });
    await asPerson(gw, owner, 'PUT', '/api/account/settings', { disabled_tool_groups: [] });
  });

  test('switching MCP over HTTP off stops the open session at its next call; on again, a new session works', async () => {
    expect((await callTool(ai, 'machines_list', {})).ok).toBe(true);
    const byAdmin = await asPerson(gw, admin, 'PUT', '/api/account/settings', { mcp_http: false });
    expect(byAdmin.status).toBe(403);
    await asPerson(gw, owner, 'PUT', '/api/account/settings', { mcp_http: false });
    await expect(callTool(ai, 'machines_list', {})).rejects.toThrow(/403|switched off/);
    await expect(mcpClient(gw.url, token)).rejects.toThrow();
    await asPerson(gw, owner, 'PUT', '/api/account/settings', { mcp_http: true });
    await ai.close().catch(() => {});
    ai = await mcpClient(gw.url, token);
    expect((await callTool(ai, 'machines_list', {})).ok).toBe(true);
  });

  test('the stdio bridge is its own switch: on while HTTP is off it still works, off it is refused', async () => {
    const bridge = new McpClient({ name: 'bridge-test', version: '1.0.0' });
    await bridge.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', cliMain, 'mcp'],
        cwd: repoRoot,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/', LETKITE_URL: gw.url, LETKITE_TOKEN: token },
        stderr: 'pipe',
      }),
    );
    try {
      await asPerson(gw, owner, 'PUT', '/api/account/settings', { mcp_http: false });
      expect((await callTool(bridge, 'machines_list', {})).ok).toBe(true);
      await expect(callTool(ai, 'machines_list', {})).rejects.toThrow();
      await asPerson(gw, owner, 'PUT', '/api/account/settings', { mcp_http: true, stdio_bridge: false });
      await expect(callTool(bridge, 'machines_list', {}, { timeout: 10_000 })).rejects.toThrow();
    } finally {
      await asPerson(gw, owner, 'PUT', '/api/account/settings', { mcp_http: true, stdio_bridge: true });
      await bridge.close().catch(() => {});
    }
  });
});
