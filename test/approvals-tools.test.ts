import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TestAccount as Account, asPerson, type TestAccount, type TestPerson, totpCode } from './support/approvals';
import { callTool, FULL_SHELL_CEILING, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir, waitFor } from './support/processes';

/** shell_run, job_start and terminal_open always need a human; `printf` needs one wherever it runs. */
const POLICY = {
  name: 'gated-tools',
  shell: 'full',
  files: [{ path: '*', access: 'rw' }],
  commands: { mode: 'shell', default: 'allow', rules: [{ match: 'printf *', verdict: 'approve' }] },
  approval: {
    tools: ['shell_run', 'job_start', 'terminal_open', 'copy_between_hosts'],
    approvers: 'connector',
    timeout: '10m',
  },
};

interface Pending {
  status: 'pending_approval';
  approval_id: string;
  message: string;
  previous?: { approval_id: string; status: string };
}
type Outcome = { ok: boolean; data: unknown; error?: unknown };

describe('approvals: shell_run, job_start, terminal_open and exec_many', () => {
  let gw: TestGateway;
  let account: TestAccount;
  const agents: TestAgent[] = [];
  const ids = new Map<string, string>();
  let approvers: TestPerson[] = [];
  let requester: TestPerson;
  let ai: Client;
  const work = tempDir('approvals-tools');
  const file = (name: string) => join(work, name);

  beforeAll(async () => {
    gw = await TestGateway.start();
    for (const name of ['m1', 'm2', 'm3']) {
      agents.push(await gw.addAgent(name, { ceiling: `${FULL_SHELL_CEILING}terminals = true\n` }));
    }
    account = await Account.open(gw);
    // Several approvers: each TOTP step is accepted once per person.
    approvers = [
      await account.person('Olivia', 'owner'),
      await account.person('Adam', 'admin'),
      await account.person('Ada', 'admin'),
      await account.person('Abe', 'admin'),
    ];
    requester = await account.person('Remy', 'member', { permissions: ['machines.view', 'clients.connect'] });
    ai = await mcpClient(gw.url, (await account.token(requester.userId, POLICY)).token);
    for (const name of ['m1', 'm2', 'm3']) await machineOnline(ai, name);
    const list = await callTool<{ machines: { id: string; name: string }[] }>(ai, 'machines_list', {});
    for (const m of list.data.machines) ids.set(m.name, m.id);
  }, 180_000);

  afterAll(async () => {
    await ai?.close();
    await account?.close();
    for (const a of agents) await a.dispose();
    await gw?.dispose();
    removeDir(work);
  });

  let turn = 0;
  /** Approves with a TOTP code, taking turns among the approvers. */
  const approve = async (id: string) => {
    const who = approvers[turn++ % approvers.length] as TestPerson;
    const r = await asPerson(gw, who, 'POST', `/api/approvals/${id}/approve`, {
      method: 'totp',
      code: await totpCode(who),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  const asPending = (r: Outcome): Pending => {
    expect(r.error).toBeUndefined();
    expect((r.data as Pending).status).toBe('pending_approval');
    return r.data as Pending;
  };
  const view = async (id: string) =>
    (await asPerson(gw, approvers[0] as TestPerson, 'GET', `/api/approvals/${id}`)).body.approval as Record<
      string,
      unknown
    >;
  const requests = () => account.audit('approval.request').length;

  test('shell_run: pending first, runs once after a TOTP approval, the repeat asks again', async () => {
    const log = file('shell.log');
    const call = { machine: 'm1', command: `printf s >> ${log}` };
    const p = asPending(await callTool(ai, 'shell_run', call));
    expect(p.message).toContain('shell_run');
    expect(asPending(await callTool(ai, 'shell_run', call)).approval_id).toBe(p.approval_id);
    expect(existsSync(log)).toBe(false);
    expect(await view(p.approval_id)).toMatchObject({
      tool: 'shell_run',
      machine: { name: 'm1' },
      args: { command: `printf s >> ${log}` },
    });

    await approve(p.approval_id);
    const ran = await callTool<{ exit_code: number; session_id: string }>(ai, 'shell_run', call);
    expect(ran.error).toBeUndefined();
    expect(ran.data.exit_code).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('s');

    const again = asPending(await callTool(ai, 'shell_run', call));
    expect(again.previous).toEqual({ approval_id: p.approval_id, status: 'used' });
    expect(readFileSync(log, 'utf8')).toBe('s');
  });

  test('copy_between_hosts: one approval for the pair of machines, then the copy runs once', async () => {
    writeFileSync(file('copy-src.txt'), 'payload');
    const call = {
      source: { machine: 'm1', path: file('copy-src.txt') },
      destination: { machine: 'm2', path: file('copy-dst.txt') },
    };
    const p = asPending(await callTool(ai, 'copy_between_hosts', call));
    expect(await view(p.approval_id)).toMatchObject({
      tool: 'copy_between_hosts',
      reason: { kind: 'policy_tool', tool: 'copy_between_hosts' },
    });
    expect(existsSync(file('copy-dst.txt'))).toBe(false);
    await approve(p.approval_id);
    const copied = await callTool<{ bytes: number }>(ai, 'copy_between_hosts', call);
    expect(copied.error).toBeUndefined();
    expect(copied.data.bytes).toBe(7);
    expect(readFileSync(file('copy-dst.txt'), 'utf8')).toBe('payload');
    const swapped = asPending(
      await callTool(ai, 'copy_between_hosts', {
        source: call.destination,
        destination: { machine: 'm1', path: file('copy-back.txt') },
      }),
    );
    expect(swapped.approval_id).not.toBe(p.approval_id);
  });

  test('job_start: pending first, starts once after a TOTP approval', async () => {
    const log = file('job.log');
    const call = { machine: 'm2', command: `echo j >> ${log}` };
    const p = asPending(await callTool(ai, 'job_start', call));
    expect(await view(p.approval_id)).toMatchObject({
      tool: 'job_start',
      machine: { name: 'm2' },
      reason: { kind: 'policy_tool', tool: 'job_start' },
    });
    expect(existsSync(log)).toBe(false);

    await approve(p.approval_id);
    const started = await callTool<{ job_id: string }>(ai, 'job_start', call);
    expect(started.error).toBeUndefined();
    await waitFor('the job to exit', async () => {
      const s = await callTool<{ state: string }>(ai, 'job_status', { machine: 'm2', job_id: started.data.job_id });
      return s.data.state === 'exited';
    });
    expect(readFileSync(log, 'utf8')).toBe('j\n');

    const again = asPending(await callTool(ai, 'job_start', call));
    expect(again.previous).toEqual({ approval_id: p.approval_id, status: 'used' });
    expect(readFileSync(log, 'utf8')).toBe('j\n');
  });

  test('terminal_open: pending first (approval.tools only), opens once after a TOTP approval', async () => {
    const call = { machine: 'm3', cols: 90, rows: 25 };
    const p = asPending(await callTool(ai, 'terminal_open', call));
    expect(await view(p.approval_id)).toMatchObject({
      tool: 'terminal_open',
      machine: { name: 'm3' },
      args: { cols: 90, rows: 25 },
      reason: { kind: 'policy_tool', tool: 'terminal_open' },
    });
    // Another size is another call.
    const other = asPending(await callTool(ai, 'terminal_open', { ...call, cols: 91 }));
    expect(other.approval_id).not.toBe(p.approval_id);

    await approve(p.approval_id);
    const opened = await callTool<{ terminal_id: string; cols: number }>(ai, 'terminal_open', call);
    expect(opened.error).toBeUndefined();
    expect(opened.data.cols).toBe(90);
    try {
      const again = asPending(await callTool(ai, 'terminal_open', call));
      expect(again.previous).toEqual({ approval_id: p.approval_id, status: 'used' });
    } finally {
      await callTool(ai, 'terminal_close', { machine: 'm3', terminal_id: opened.data.terminal_id });
    }
  });

  test('exec_many: one approval for the whole call, bound to the machine set; then it runs on every machine', async () => {
    const log = file('many.log');
    const command = `printf x >> ${log}`;
    const before = requests();
    const p = asPending(await callTool(ai, 'exec_many', { machines: ['m1', 'm2', 'm3'], command }));
    expect(requests()).toBe(before + 1);
    // The same machines in another order, by id, are the same call: no second request.
    const sameSet = { machines: ['m3', ids.get('m1'), 'm2'], command };
    expect(asPending(await callTool(ai, 'exec_many', sameSet)).approval_id).toBe(p.approval_id);
    expect(requests()).toBe(before + 1);
    expect(existsSync(log)).toBe(false);

    const shown = await view(p.approval_id);
    expect(shown).toMatchObject({
      tool: 'exec_many',
      machine: { name: '3 machines: m1, m2, m3' },
      args: { command, machines: ['m1', 'm2', 'm3'].map((n) => ids.get(n)).sort() },
      reason: { kind: 'command_rule' },
    });
    expect((shown.machine as { id: string }).id).toMatch(/^set_[0-9a-f]{64}$/);

    await approve(p.approval_id);
    // A changed machine set is a new request; it neither runs nor uses the approval.
    const fewer = asPending(await callTool(ai, 'exec_many', { machines: ['m1', 'm2'], command }));
    expect(fewer.approval_id).not.toBe(p.approval_id);
    expect(existsSync(log)).toBe(false);

    const ran = await callTool<{ results: { name: string; ok: boolean }[]; succeeded: number }>(
      ai,
      'exec_many',
      sameSet,
    );
    expect(ran.error).toBeUndefined();
    expect(ran.data.results.map((r) => [r.name, r.ok])).toEqual([
      ['m3', true],
      ['m1', true],
      ['m2', true],
    ]);
    expect(ran.data.succeeded).toBe(3);
    expect(readFileSync(log, 'utf8')).toBe('xxx');
    expect(account.audit('approval.use').map((e) => e.target)).toContain(p.approval_id);

    // Used once: the identical call asks again.
    const again = asPending(await callTool(ai, 'exec_many', sameSet));
    expect(again.previous).toEqual({ approval_id: p.approval_id, status: 'used' });
    expect(readFileSync(log, 'utf8')).toBe('xxx');
  });

  test('exec_many: per-machine errors stay per machine, and a denied call stays denied', async () => {
    const log = file('denied.log');
    const call = { machines: ['m1', 'nope', 'm2'], command: `printf d >> ${log}` };
    const p = asPending(await callTool(ai, 'exec_many', call));
    expect(await view(p.approval_id)).toMatchObject({ machine: { name: '2 machines: m1, m2' } });
    const denied = await asPerson(gw, approvers[1] as TestPerson, 'POST', `/api/approvals/${p.approval_id}/deny`);
    expect(denied.status).toBe(200);
    const again = await callTool(ai, 'exec_many', call);
    expect(again.error).toMatchObject({ code: 'approval_denied', details: { approval_id: p.approval_id } });
    expect(existsSync(log)).toBe(false);

    // A command that needs nobody runs without asking; the unknown machine is its own error.
    const before = requests();
    const plain = await callTool<{ results: { machine: string; ok: boolean; error?: { code: string } }[] }>(
      ai,
      'exec_many',
      { ...call, command: 'true' },
    );
    expect(plain.data.results.map((r) => [r.machine, r.ok, r.error?.code])).toEqual([
      [ids.get('m1'), true, undefined],
      ['nope', false, 'machine_not_found'],
      [ids.get('m2'), true, undefined],
    ]);
    expect(requests()).toBe(before);
  });
});
