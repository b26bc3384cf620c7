import { join } from 'node:path';
import { AuditEventView, AuditListResponse } from '@letkite/protocol/api';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fakeTokens } from '../apps/gateway/src/output/fake-secrets.fixture';
import { asPerson, TestAccount, type TestPerson } from './support/approvals';
import { callTool, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { runCliCommand, waitFor } from './support/processes';
import { TestSmtp } from './support/smtp';

/**
 * The activity log end to end (issue #14): a real gateway and agent, the real MCP SDK client. Every tool call is a
 * row with its typed columns and masked arguments; export round-trips; the hash chain catches an edit made
 * straight in the database file; and the first command a connection runs on a machine mails the person who
 * connected it, once.
 */

const SECRET = fakeTokens(7)['github-token'] as string;

describe('activity log', () => {
  let smtp: TestSmtp;
  let gw: TestGateway;
  let agent: TestAgent;
  let account: TestAccount;
  let owner: TestPerson;
  let client: Client;
  let machineId: string;

  beforeAll(async () => {
    smtp = await TestSmtp.start();
    gw = await TestGateway.start(smtp.env);
    agent = await gw.addAgent('act');
    account = await TestAccount.open(gw);
    owner = await account.person('Olivia', 'owner');
    client = await mcpClient(gw.url, await gw.apiToken('activity'));
    await machineOnline(client, 'act');
    machineId = (account.store.sqlite.prepare("SELECT id FROM machines WHERE name = 'act'").get() as { id: string }).id;
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await account?.close();
    await gw?.dispose();
    await smtp?.close();
  });

  const list = async (query: string) => {
    const res = await asPerson(gw, owner, 'GET', `/api/audit?${query}`);
    expect(res.status).toBe(200);
    return AuditListResponse.parse(res.body).events;
  };

  test('a tool call is one row: who, connection, client, machine, tool, verdict, reasons, duration, masked arguments', async () => {
    const run = await callTool<{ stdout: string }>(client, 'exec', { machine: 'act', command: `echo GH=${SECRET}` });
    expect(run.ok).toBe(true);
    const [row] = await list(`tool=exec&action=tool&machine=${machineId}`);
    if (!row) throw new Error('no exec row');
    expect(row).toMatchObject({
      action: 'tool.exec',
      tool: 'exec',
      machine_id: machineId,
      machine_name: 'act',
      user_id: account.ownerId,
      user_name: 'Olivia',
      client_name: 'letkite-test',
      decision: 'allow',
      outcome: 'ok',
    });
    expect(row.credential_id).toMatch(/^tok_|^[a-z]+_/);
    expect(row.actor).toBe(`token:${row.credential_id}`);
    expect(typeof row.duration_ms).toBe('number');
    expect(row.request_id).toBeTruthy();
    const args = (row.details as { arguments: { command: string } }).arguments;
    expect(args.command).toContain('***');
    expect(JSON.stringify(row)).not.toContain(SECRET.slice(4, 20));
    expect((row.details as { reasons?: unknown[] }).reasons?.length).toBeGreaterThan(0);
    // The stored row itself holds no secret either.
    const stored = account.store.sqlite.prepare('SELECT details FROM audit_events WHERE id = ?').get(row.id) as {
      details: string;
    };
    expect(stored.details).not.toContain(SECRET.slice(4, 20));
    // Refused calls are rows too, with the refusing code as outcome.
    const refused = await callTool(client, 'exec', { machine: 'act', command: 'rm -rf /' });
    expect(refused.ok).toBe(false);
    const [denied] = await list('tool=exec&action=tool&outcome=error');
    expect(denied).toMatchObject({ decision: 'deny', outcome: refused.error?.code });
  });

  test('the first command of a connection on a machine mails the person who connected it, once', async () => {
    await callTool(client, 'exec', { machine: 'act', command: 'true' });
    const mail = await smtp.waitForMail(owner.email, /first time/);
    expect(mail.text).toContain('exec');
    expect(mail.text).toContain('"act"');
    expect(TestSmtp.linkIn(mail, gw.url)).toContain(`/activity?connection=`);
    await callTool(client, 'exec', { machine: 'act', command: 'true' });
    await callTool(client, 'read_file', { machine: 'act', path: '/etc/hostname' });
    const notices = await list('action=takeover.notice');
    expect(notices).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1500));
    expect(smtp.messages.filter((m) => /first time/.test(m.subject ?? ''))).toHaveLength(1);
  });

  test('export as JSON lines and CSV round-trips the rows the list shows', async () => {
    const listed = await list('action=tool&limit=500');
    const jsonl = await fetch(new URL('/api/audit/export?format=jsonl&action=tool', gw.url), {
      headers: { cookie: owner.cookie, origin: gw.url },
    });
    expect(jsonl.status).toBe(200);
    const exported = (await jsonl.text())
      .trim()
      .split('\n')
      .map((l) => AuditEventView.parse(JSON.parse(l)));
    expect(exported.map((e) => e.id)).toEqual(listed.map((e) => e.id).reverse());
    expect(exported.map((e) => e.details)).toEqual(listed.map((e) => e.details).reverse());
    const csv = await fetch(new URL('/api/audit/export?format=csv&action=tool', gw.url), {
      headers: { cookie: owner.cookie, origin: gw.url },
    });
    const csvText = await csv.text();
    expect(csvText.startsWith('id,at,actor,action,')).toBe(true);
    expect(csvText.trim().split('\r\n')).toHaveLength(exported.length + 1);
    // The CLI exports the same rows from the database file.
    const cli = await runCliCommand(['admin', 'audit', 'export', '--format', 'jsonl', '--action', 'tool'], gw.cliEnv);
    expect(cli.code).toBe(0);
    const fromCli = cli.stdout
      .trim()
      .split('\n')
      .map((l) => AuditEventView.parse(JSON.parse(l)));
    expect(fromCli.map((e) => [e.id, e.hash])).toEqual(exported.map((e) => [e.id, e.hash]));
  });

  test('verify exits 0 while whole and 1 naming the row after an edit in the database file', async () => {
    const ok = await runCliCommand(['admin', 'audit', 'verify'], gw.cliEnv);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    const [row] = await list('tool=exec&action=tool');
    // What someone with the database file and sqlite3 would do: make a command look harmless.
    const db = new Database(join(gw.dataDir, 'letkite.db'));
    try {
      db.prepare(`UPDATE audit_events SET details = '{"arguments":{"command":"true"}}' WHERE id = ?`).run(row?.id);
    } finally {
      db.close();
    }
    const broken = await runCliCommand(['admin', 'audit', 'verify'], gw.cliEnv);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`broken at row ${row?.id}`);
    const rest = await asPerson(gw, owner, 'GET', '/api/audit/verify');
    expect(rest.body).toMatchObject({ ok: false, broken_id: row?.id, reason: 'row_changed' });
    await waitFor('the gateway to keep writing after the check', async () => (await list('limit=1')).length === 1);
  });
});
