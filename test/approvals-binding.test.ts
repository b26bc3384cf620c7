import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  TestAccount as Account,
  asPerson,
  type TestAccount,
  TestMailbox,
  type TestPerson,
  totpCode,
} from './support/approvals';
import { callTool, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir } from './support/processes';

/** A policy whose `touch` and `printf` need a human, and whose write_file always does. */
function opsPolicy(approvers = 'connector', extra: Record<string, unknown> = {}) {
  return {
    name: 'ops',
    shell: 'full',
    files: [{ path: '*', access: 'rw' }],
    commands: {
      mode: 'shell',
      default: 'allow',
      rules: [
        { match: 'touch *', verdict: 'approve' },
        { match: 'printf *', verdict: 'approve' },
      ],
    },
    approval: { tools: ['write_file'], approvers, timeout: '10m' },
    ...extra,
  };
}

interface Pending {
  status: 'pending_approval';
  approval_id: string;
  approvers: string[];
  expires_at: string;
  message: string;
  previous?: { approval_id: string; status: string };
}

describe('approvals: binding, decisions and restart', () => {
  let gw: TestGateway;
  let mailbox: TestMailbox;
  let account: TestAccount;
  let m1: TestAgent;
  let m2: TestAgent;
  let owner: TestPerson;
  let admin: TestPerson;
  let admin2: TestPerson;
  let admin3: TestPerson;
  let decider: TestPerson;
  let requester: TestPerson;
  let ai: Client;
  let aiToken: { id: string; token: string };
  const work = tempDir('approvals-work');

  beforeAll(async () => {
    mailbox = await TestMailbox.start();
    gw = await TestGateway.start(mailbox.env);
    m1 = await gw.addAgent('m1');
    m2 = await gw.addAgent('m2');
    account = await Account.open(gw);
    owner = await account.person('Olivia', 'owner');
    admin = await account.person('Adam', 'admin');
    admin2 = await account.person('Ada', 'admin');
    admin3 = await account.person('Abe', 'admin');
    decider = await account.person('Dora', 'member', { permissions: ['machines.view', 'approvals.decide'] });
    requester = await account.person('Remy', 'member', { permissions: ['machines.view', 'clients.connect'] });
    aiToken = await account.token(requester.userId, opsPolicy());
    ai = await mcpClient(gw.url, aiToken.token);
    await machineOnline(ai, 'm1');
    await machineOnline(ai, 'm2');
  });

  afterAll(async () => {
    await ai?.close();
    await account?.close();
    await m1?.dispose();
    await m2?.dispose();
    await gw?.dispose();
    await mailbox?.stop();
    removeDir(work);
  });

  const file = (name: string) => join(work, name);
  const reconnect = async () => {
    await ai.close();
    ai = await mcpClient(gw.url, aiToken.token);
    return ai;
  };
  const asPending = (r: { ok: boolean; data: unknown; error?: unknown }): Pending => {
    expect(r.error).toBeUndefined();
    expect((r.data as Pending).status).toBe('pending_approval');
    return r.data as Pending;
  };
  const approveWithTotp = async (who: TestPerson, id: string) =>
    asPerson(gw, who, 'POST', `/api/approvals/${id}/approve`, { method: 'totp', code: await totpCode(who) });

  test('a gated exec answers pending_approval at once, mails the approvers a link that decides nothing, and runs once after a TOTP approval', async () => {
    const target = file('first');
    const pending = asPending(await callTool(ai, 'exec', { machine: 'm1', command: `touch ${target}` }));
    expect(pending.approval_id).toMatch(/^apr_[0-9a-f]{32}$/);
    expect(pending.approvers.sort()).toEqual(['Abe', 'Ada', 'Adam', 'Olivia', 'Remy']);
    expect(pending.message).toContain('approval_wait');
    expect(existsSync(target)).toBe(false);

    // The identical call while pending reuses the same request instead of asking again.
    const again = asPending(await callTool(ai, 'exec', { machine: 'm1', command: `touch ${target}` }));
    expect(again.approval_id).toBe(pending.approval_id);

    const mail = await mailbox.waitForMail(
      (m) => m.to.includes(admin.email) && m.text.includes(pending.approval_id),
      'approval request to Adam',
    );
    const link = /(http:\/\/\S+\/approvals\/apr_[0-9a-f]+)/.exec(mail.text)?.[1];
    expect(link).toBe(`${gw.url}/approvals/${pending.approval_id}`);
    // Following the link (signed in or not) decides nothing.
    await fetch(link ?? '');
    await fetch(link ?? '', { headers: { cookie: admin.cookie } });
    const view = await asPerson(gw, admin, 'GET', `/api/approvals/${pending.approval_id}`);
    expect(view.status).toBe(200);
    const approval = view.body.approval as Record<string, unknown>;
    expect(approval).toMatchObject({
      status: 'pending',
      tool: 'exec',
      machine: { name: 'm1' },
      args: { command: `touch ${target}` },
      requester: { name: 'Remy' },
      client_name_declared: 'letkite-test',
      can_decide: true,
    });
    expect(approval.reason).toMatchObject({ kind: 'command_rule' });

    // Approving needs a proof: none, or a wrong code, is refused.
    expect((await asPerson(gw, admin, 'POST', `/api/approvals/${pending.approval_id}/approve`, {})).status).toBe(400);
    const wrong = await asPerson(gw, admin, 'POST', `/api/approvals/${pending.approval_id}/approve`, {
      method: 'totp',
      code: '000000',
    });
    expect((wrong.body.error as { code: string }).code).toBe('forbidden');
    // Without the CSRF token nothing is decided either.
    const noCsrf = await asPerson(gw, { ...admin, csrf: 'nope' }, 'POST', `/api/approvals/${pending.approval_id}/deny`);
    expect(noCsrf.status).toBe(403);

    const ok = await approveWithTotp(admin, pending.approval_id);
    expect(ok.status).toBe(200);
    expect((ok.body.approval as { status: string }).status).toBe('approved');
    await mailbox.waitForMail((m) => m.to.includes(requester.email) && /approved/.test(m.subject), 'outcome to Remy');

    const waited = await callTool(ai, 'approval_wait', { approval_id: pending.approval_id, max_wait_s: 1 });
    expect(waited.data).toMatchObject({ status: 'approved', used_at: null });
    const ran = await callTool(ai, 'exec', { machine: 'm1', command: `touch ${target}` });
    expect(ran.ok).toBe(true);
    expect((ran.data as { exit_code: number }).exit_code).toBe(0);
    expect(existsSync(target)).toBe(true);
    expect(account.audit('approval.use').map((e) => e.target)).toContain(pending.approval_id);
  });

  test('a TOTP code approves once: replaying it on another request is refused', async () => {
    const a = asPending(await callTool(ai, 'exec', { machine: 'm1', command: `touch ${file('replay-a')}` }));
    const b = asPending(await callTool(ai, 'exec', { machine: 'm1', command: `touch ${file('replay-b')}` }));
    const code = await totpCode(owner);
    const first = await asPerson(gw, owner, 'POST', `/api/approvals/${a.approval_id}/approve`, {
      method: 'totp',
      code,
    });
    expect(first.status).toBe(200);
    const replay = await asPerson(gw, owner, 'POST', `/api/approvals/${b.approval_id}/approve`, {
      method: 'totp',
      code,
    });
    expect(replay.status).toBe(403);
    expect(replay.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'proof' } });
    const still = await asPerson(gw, owner, 'GET', `/api/approvals/${b.approval_id}`);
    expect((still.body.approval as { status: string }).status).toBe('pending');
  });

  test('an approval is bound to the arguments, the machine and the policy, and is used exactly once', async () => {
    const target = file('bound');
    const call = { machine: 'm1', command: `touch ${target}` };
    const p = asPending(await callTool(ai, 'exec', call));
    expect((await approveWithTotp(admin2, p.approval_id)).status).toBe(200);

    // Changed arguments: a new request, nothing runs.
    const changed = asPending(await callTool(ai, 'exec', { ...call, command: `touch ${target}x` }));
    expect(changed.approval_id).not.toBe(p.approval_id);
    // Another machine (by id or name, the binding holds the machine id): a new request.
    const other = asPending(await callTool(ai, 'exec', { ...call, machine: 'm2' }));
    expect(other.approval_id).not.toBe(p.approval_id);
    // A changed policy: not usable either.
    // A changed policy (an MCP session keeps the grant it opened with, so the AI reconnects): not usable either.
    account.setPolicy(aiToken.id, opsPolicy('connector', { deny: ['/nonexistent-secret'] }));
    try {
      const underNewPolicy = asPending(await callTool(await reconnect(), 'exec', call));
      expect(underNewPolicy.approval_id).not.toBe(p.approval_id);
      expect(existsSync(target)).toBe(false);
    } finally {
      account.setPolicy(aiToken.id, opsPolicy());
    }
    await reconnect();

    // `confirm` is not bound: the identical call with confirm: true uses the approval.
    const ran = await callTool(ai, 'exec', { ...call, confirm: true });
    expect(ran.ok).toBe(true);
    expect(existsSync(target)).toBe(true);

    // Used twice: the repeat asks again and says why.
    const twice = asPending(await callTool(ai, 'exec', call));
    expect(twice.approval_id).not.toBe(p.approval_id);
    expect(twice.previous).toEqual({ approval_id: p.approval_id, status: 'used' });
    expect((await callTool(ai, 'approval_wait', { approval_id: p.approval_id, max_wait_s: 0 })).data).toMatchObject({
      status: 'approved',
    });
  });

  test('an approval that expired before use is not usable', async () => {
    const call = { machine: 'm2', command: `touch ${file('expired')}` };
    const p = asPending(await callTool(ai, 'exec', call));
    expect((await approveWithTotp(admin2, p.approval_id)).status).toBe(200);
    account.expireNow(p.approval_id);
    const after = asPending(await callTool(ai, 'exec', call));
    expect(after.approval_id).not.toBe(p.approval_id);
    expect(after.previous).toEqual({ approval_id: p.approval_id, status: 'expired' });
    expect(existsSync(file('expired'))).toBe(false);
    expect((await callTool(ai, 'approval_wait', { approval_id: p.approval_id })).data).toMatchObject({
      status: 'expired',
    });
    account.expireNow(after.approval_id);
    const tooLate = await asPerson(gw, admin, 'POST', `/api/approvals/${after.approval_id}/deny`);
    expect((tooLate.body.error as { code: string }).code).toBe('approval_expired');
  });

  test('a denied call repeated with the same arguments is refused without asking anyone', async () => {
    const call = { machine: 'm1', path: file('denied.txt'), content: 'no' };
    const p = asPending(await callTool(ai, 'write_file', call));
    await mailbox.waitForMail((m) => m.to.includes(admin2.email) && m.text.includes(p.approval_id), 'request to Ada');
    await new Promise((r) => setTimeout(r, 300));
    const mailsBefore = mailbox.mails.length;
    const denied = await asPerson(gw, admin, 'POST', `/api/approvals/${p.approval_id}/deny`);
    expect((denied.body.approval as { status: string }).status).toBe('denied');
    const again = await callTool(ai, 'write_file', call);
    expect(again.error).toMatchObject({ code: 'approval_denied', details: { approval_id: p.approval_id } });
    expect(existsSync(file('denied.txt'))).toBe(false);
    expect((await callTool(ai, 'approval_wait', { approval_id: p.approval_id })).data).toMatchObject({
      status: 'denied',
    });
    await mailbox.waitForMail((m) => m.to.includes(requester.email) && /denied/.test(m.subject), 'denial to Remy');
    // Only the outcome mail to the requester: no approver was asked again.
    expect(mailbox.mails.slice(mailsBefore).every((m) => m.to.includes(requester.email))).toBe(true);
  });

  test('under four-eyes nobody approves their own request', async () => {
    const ownToken = await account.token(owner.userId, opsPolicy('four_eyes'));
    const ownAi = await mcpClient(gw.url, ownToken.token);
    try {
      const p = asPending(await callTool(ownAi, 'exec', { machine: 'm1', command: `touch ${file('four-eyes')}` }));
      expect(p.approvers).not.toContain('Olivia');
      expect(p.approvers).toContain('Dora');
      const view = await asPerson(gw, owner, 'GET', `/api/approvals/${p.approval_id}`);
      expect(view.body.approval).toMatchObject({ can_decide: false });
      const self = await approveWithTotp(owner, p.approval_id);
      expect(self.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'not_an_approver' } });
      // The requester (a member without approvals.decide) is no approver here either.
      const member = await asPerson(gw, requester, 'POST', `/api/approvals/${p.approval_id}/deny`);
      expect(member.status).toBe(404);
      expect((await approveWithTotp(decider, p.approval_id)).status).toBe(200);
      expect((await callTool(ownAi, 'exec', { machine: 'm1', command: `touch ${file('four-eyes')}` })).ok).toBe(true);
      expect(existsSync(file('four-eyes'))).toBe(true);
    } finally {
      await ownAi.close();
    }
  });

  test('two identical calls racing after approval run it once', async () => {
    const log = file('race.log');
    const call = { machine: 'm1', command: `printf x >> ${log}` };
    const p = asPending(await callTool(ai, 'exec', call));
    expect((await approveWithTotp(admin3, p.approval_id)).status).toBe(200);
    const [a, b] = await Promise.all([callTool(ai, 'exec', call), callTool(ai, 'exec', call)]);
    const statuses = [a, b].map((r) =>
      (r.data as { status?: string }).status === 'pending_approval' ? 'pending' : 'ran',
    );
    expect(statuses.sort()).toEqual(['pending', 'ran']);
    expect(readFileSync(log, 'utf8')).toBe('x');
  });

  test('the 21st pending request of a connection is refused', async () => {
    const t = await account.token(requester.userId, opsPolicy());
    const client = await mcpClient(gw.url, t.token);
    try {
      for (let i = 0; i < 20; i++) {
        asPending(await callTool(client, 'exec', { machine: 'm1', command: `touch ${file(`many-${i}`)}` }));
      }
      const r = await callTool(client, 'exec', { machine: 'm1', command: `touch ${file('many-20')}` });
      expect(r.error).toMatchObject({ code: 'too_many_pending_approvals', details: { pending: 20, max: 20 } });
      // Another connection is not affected.
      asPending(await callTool(ai, 'exec', { machine: 'm1', command: `touch ${file('other-connection')}` }));
    } finally {
      await client.close();
    }
  });

  test('approval_wait returns within its bound, sends progress, and wakes on a decision', async () => {
    const p = asPending(await callTool(ai, 'exec', { machine: 'm2', command: `touch ${file('waited')}` }));
    const progress: number[] = [];
    const started = Date.now();
    const timedOut = await ai.callTool(
      { name: 'approval_wait', arguments: { approval_id: p.approval_id, max_wait_s: 6 } },
      undefined,
      { timeout: 30_000, onprogress: (n) => progress.push(n.progress) },
    );
    const took = Date.now() - started;
    expect(timedOut.structuredContent).toMatchObject({ status: 'pending' });
    expect(took).toBeGreaterThanOrEqual(5_500);
    expect(took).toBeLessThan(10_000);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual([...progress].sort((x, y) => x - y));

    const waiting = ai.callTool(
      { name: 'approval_wait', arguments: { approval_id: p.approval_id, max_wait_s: 45 } },
      undefined,
      { timeout: 60_000 },
    );
    await new Promise((r) => setTimeout(r, 500));
    const decidedAt = Date.now();
    await asPerson(gw, admin, 'POST', `/api/approvals/${p.approval_id}/deny`);
    expect((await waiting).structuredContent).toMatchObject({ status: 'denied' });
    expect(Date.now() - decidedAt).toBeLessThan(1_500);

    const unknown = await callTool(ai, 'approval_wait', { approval_id: 'apr_00000000000000000000000000000000' });
    expect(unknown.error?.code).toBe('not_found');
    const over = await callTool(ai, 'approval_wait', { approval_id: p.approval_id, max_wait_s: 46 });
    expect(over.error?.code).toBe('invalid_params');
  });

  test('a gateway restart loses no pending or approved request', async () => {
    const pendingCall = { machine: 'm1', command: `touch ${file('after-restart-pending')}` };
    const approvedCall = { machine: 'm2', command: `touch ${file('after-restart-approved')}` };
    const pending = asPending(await callTool(ai, 'exec', pendingCall));
    const approved = asPending(await callTool(ai, 'exec', approvedCall));
    expect((await approveWithTotp(admin, approved.approval_id)).status).toBe(200);

    await ai.close();
    await gw.restart();
    ai = await mcpClient(gw.url, aiToken.token);
    await machineOnline(ai, 'm1');
    await machineOnline(ai, 'm2');

    expect(
      (await callTool(ai, 'approval_wait', { approval_id: pending.approval_id, max_wait_s: 0 })).data,
    ).toMatchObject({
      status: 'pending',
    });
    expect(asPending(await callTool(ai, 'exec', pendingCall)).approval_id).toBe(pending.approval_id);
    const ran = await callTool(ai, 'exec', approvedCall);
    expect(ran.ok && (ran.data as { exit_code: number }).exit_code).toBe(0);
    expect(existsSync(file('after-restart-approved'))).toBe(true);
    expect(existsSync(file('after-restart-pending'))).toBe(false);
  });
});
