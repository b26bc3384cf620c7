import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitRequestURLParams,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TestAccount as Account, asPerson, type TestAccount, type TestPerson, totpCode } from './support/approvals';
import { machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir } from './support/processes';

/** `printf` needs a human wherever it runs. */
const POLICY = {
  name: 'gated-printf',
  shell: 'full',
  files: [{ path: '*', access: 'rw' }],
  commands: { mode: 'shell', default: 'allow', rules: [{ match: 'printf *', verdict: 'approve' }] },
  approval: { approvers: 'connector', timeout: '10m' },
};

/** A client that can show a URL (URL-mode elicitation), answering each elicitation with `answer`. */
async function urlClient(
  url: string,
  token: string,
  answer: (p: ElicitRequestURLParams) => Promise<ElicitResult>,
): Promise<{ client: Client; completed: string[] }> {
  const client = new Client({ name: 'url-capable', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
  const completed: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => answer(req.params as ElicitRequestURLParams));
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
    completed.push(n.params.elicitationId);
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return { client, completed };
}

describe('approvals through the client: URL-mode elicitation', () => {
  let gw: TestGateway;
  let account: TestAccount;
  let agent: TestAgent;
  let approver: TestPerson;
  let requester: TestPerson;
  let token: string;
  const work = tempDir('elicitation');

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('eli');
    account = await Account.open(gw);
    approver = await account.person('Olivia', 'owner');
    requester = await account.person('Remy', 'member', { permissions: ['machines.view', 'clients.connect'] });
    token = (await account.token(requester.userId, POLICY)).token;
    const probe = await mcpClient(gw.url, token);
    await machineOnline(probe, 'eli');
    await probe.close();
  }, 180_000);

  afterAll(async () => {
    await account?.close();
    await agent?.dispose();
    await gw?.dispose();
    removeDir(work);
  });

  const approve = async (id: string) => {
    const r = await asPerson(gw, approver, 'POST', `/api/approvals/${id}/approve`, {
      method: 'totp',
      code: await totpCode(approver),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };

  test('the gated call sends the approval page, waits, and runs once the person approved there', async () => {
    const log = join(work, 'approved.log');
    const asked: ElicitRequestURLParams[] = [];
    const { client, completed } = await urlClient(gw.url, token, async (p) => {
      asked.push(p);
      // The person approves on the page (TOTP), not through the client: the client only opened the URL.
      setTimeout(() => void approve(p.elicitationId), 500);
      return { action: 'accept' };
    });
    try {
      const r = await client.callTool(
        { name: 'exec', arguments: { machine: 'eli', command: `printf ok >> ${log}` } },
        undefined,
        { timeout: 120_000 },
      );
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ exit_code: 0 });
      expect(readFileSync(log, 'utf8')).toBe('ok');
      expect(asked).toHaveLength(1);
      const [elicit] = asked as [ElicitRequestURLParams];
      expect(elicit.mode).toBe('url');
      expect(elicit.elicitationId).toMatch(/^apr_/);
      expect(new URL(elicit.url).pathname).toContain(elicit.elicitationId);
      expect(completed).toEqual([elicit.elicitationId]);
    } finally {
      await client.close();
    }
  });

  test('a denial on the page ends the wait with approval_denied, and nothing runs', async () => {
    const log = join(work, 'denied.log');
    const { client } = await urlClient(gw.url, token, async (p) => {
      setTimeout(async () => {
        const r = await asPerson(gw, approver, 'POST', `/api/approvals/${p.elicitationId}/deny`, {});
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }, 500);
      return { action: 'accept' };
    });
    try {
      const r = await client.callTool(
        { name: 'exec', arguments: { machine: 'eli', command: `printf no >> ${log}` } },
        undefined,
        { timeout: 120_000 },
      );
      expect(r.isError).toBe(true);
      expect((r.structuredContent as { code: string }).code).toBe('approval_denied');
      expect(existsSync(log)).toBe(false);
    } finally {
      await client.close();
    }
  });

  test('a client that declines gets the pending answer, as does one without URL elicitation', async () => {
    const log = join(work, 'declined.log');
    const { client } = await urlClient(gw.url, token, async () => ({ action: 'decline' }));
    const plain = await mcpClient(gw.url, token);
    try {
      const r = await client.callTool(
        { name: 'exec', arguments: { machine: 'eli', command: `printf d >> ${log}` } },
        undefined,
        { timeout: 60_000 },
      );
      expect(r.structuredContent).toMatchObject({ status: 'pending_approval' });
      const p = await plain.callTool({ name: 'exec', arguments: { machine: 'eli', command: `printf p >> ${log}` } });
      expect(p.structuredContent).toMatchObject({ status: 'pending_approval' });
      expect(existsSync(log)).toBe(false);
    } finally {
      await client.close();
      await plain.close();
    }
  });
});
