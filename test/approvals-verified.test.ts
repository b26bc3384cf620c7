import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { asPerson, TestAccount, type TestPerson, totpCode } from './support/approvals';
import { launchBrowser, newContext, screenshot, VirtualAuthenticator } from './support/browser';
import { callTool, FULL_SHELL_CEILING, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir, waitFor } from './support/processes';

/**
 * The honest path of machine-verified approvals (DESIGN §6, §9), with a real Chromium and a CDP virtual
 * authenticator: a person registers a passkey on the Security page, copies the `approvers` entry it shows into a
 * machine's ceiling, and then approves a call that hits the ceiling's approve rule with that passkey. The machine
 * runs it only because it verified that passkey's signature over exactly that call.
 */
describe('approvals the machine verifies itself, end to end in a real browser', () => {
  let gw: TestGateway;
  let account: TestAccount;
  let agent: TestAgent;
  let agent2: TestAgent;
  let entry = '';
  let petra: TestPerson;
  let ai: Client;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const work = tempDir('approvals-verified');
  const rules = 'rules = [ { match = "touch *", verdict = "approve" } ]\n';

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('vault', { ceiling: FULL_SHELL_CEILING + rules });
    agent2 = await gw.addAgent('vault2', { ceiling: FULL_SHELL_CEILING + rules });
    account = await TestAccount.open(gw);
    petra = await account.person('Petra', 'owner');
    const token = await account.token(petra.userId, {
      name: 'ops',
      shell: 'full',
      files: [{ path: '*', access: 'rw' }],
      commands: { mode: 'shell', default: 'allow' },
      approval: { approvers: 'connector', timeout: '10m', tools: ['write_file'] },
    });
    ai = await mcpClient(gw.url, token.token);

    browser = await launchBrowser();
    context = await newContext(browser, 'phone');
    await context.addCookies([
      {
        name: 'letkite_session',
        value: petra.cookie.split('=')[1] ?? '',
        url: gw.url,
        httpOnly: true,
        sameSite: 'Lax',
      },
    ]);
    page = await context.newPage();
    await VirtualAuthenticator.attach(page);
  });

  afterAll(async () => {
    await browser?.close();
    await ai?.close();
    await account?.close();
    await agent?.dispose();
    await agent2?.dispose();
    await gw?.dispose();
    removeDir(work);
  });

  test('without pinned approvers a ceiling approve rule is refused at once, nobody is asked', async () => {
    await waitFor('ceiling report', async () => {
      const r = await callTool<{ machines: { ceiling: { rules?: unknown[] } | null }[] }>(ai, 'machines_list', {});
      return r.data.machines.length === 2 && r.data.machines.every((m) => (m.ceiling?.rules?.length ?? 0) > 0);
    });
    const r = await callTool(ai, 'exec', { machine: 'vault', command: `touch ${join(work, 'never')}` });
    expect(r.error?.code).toBe('blocked_by_ceiling');
    expect(r.error?.details?.reason).toBe('no_pinned_approvers');
    expect(existsSync(join(work, 'never'))).toBe(false);
  });

  test('register a passkey, pin it, approve with it: the call runs once; TOTP cannot approve it', async () => {
    // 1. Register a passkey on the Security page and copy the ceiling entry it shows.
    await page.goto(`${gw.url}/security`);
    await page.getByLabel('Name for a new passkey').fill('Phone');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Pin on a machine').click();
    entry = (await page.locator('[data-testid^="approver-toml-"]').first().textContent()) ?? '';
    expect(entry).toMatch(
      /^\{ name = "Petra \(Phone\)", credential_id = "[\w-]+", public_key = "[\w-]+", rp_id = "localhost" \}$/,
    );
    await screenshot(page, 'security-approver-pin');

    // 2. The machine's administrator pins it.
    agent.writeCeiling(`${FULL_SHELL_CEILING}${rules}approvers = [ ${entry} ]\n`);
    await waitFor('pinned approvers reported', async () => {
      const r = await callTool<{ machines: { name: string; ceiling: { approvers?: unknown[] } | null }[] }>(
        ai,
        'machines_list',
        {},
      );
      return (r.data.machines.find((m) => m.name === 'vault')?.ceiling?.approvers?.length ?? 0) === 1;
    });

    // 3. A call hits the ceiling's approve rule: pending, passkey only.
    const marker = join(work, 'deployed');
    const call = { machine: 'vault', command: `touch ${marker} && echo once >> ${join(work, 'count')}` };
    const pending = await callTool<{ status: string; approval_id: string }>(ai, 'exec', call);
    expect(pending.data.status).toBe('pending_approval');
    const id = pending.data.approval_id;
    const view = await asPerson(gw, petra, 'GET', `/api/approvals/${id}`);
    expect(view.body.approval).toMatchObject({ passkey_only: true });

    // The API refuses an authenticator code for it, even a correct one.
    const byCode = await asPerson(gw, petra, 'POST', `/api/approvals/${id}/approve`, {
      method: 'totp',
      code: await totpCode(petra),
    });
    expect(byCode.status).toBe(403);
    expect((byCode.body.error as { details?: { reason?: string } }).details?.reason).toBe('passkey_only');

    // 4. The page offers the passkey only, and says why.
    await page.goto(`${gw.url}/approvals/${id}`);
    await page.getByRole('button', { name: 'Approve with passkey' }).waitFor();
    expect(await page.getByTestId('passkey-only').textContent()).toMatch(/Passkey only.*checks approvals itself/);
    expect(await page.getByRole('button', { name: 'Approve with code' }).count()).toBe(0);
    await screenshot(page, 'approval-passkey-only');
    await page.getByRole('button', { name: 'Approve with passkey' }).click();
    await page.getByText('Approved (not used yet)').waitFor();

    // 5. The repeated call runs once, because the machine verified the signature itself.
    expect((await callTool(ai, 'approval_wait', { approval_id: id, max_wait_s: 5 })).data).toMatchObject({
      status: 'approved',
    });
    const ran = await callTool<{ exit_code: number }>(ai, 'exec', call);
    expect(ran.data.exit_code).toBe(0);
    expect(existsSync(marker)).toBe(true);
    const again = await callTool<{ status: string }>(ai, 'exec', call);
    expect(again.data.status).toBe('pending_approval');
  });

  test('exec_many: one passkey approval covers both machines, and each machine finds its own entry', async () => {
    agent2.writeCeiling(`${FULL_SHELL_CEILING}${rules}approvers = [ ${entry} ]\n`);
    await waitFor('both machines pin the approver', async () => {
      const r = await callTool<{ machines: { ceiling: { approvers?: unknown[] } | null }[] }>(ai, 'machines_list', {});
      return r.data.machines.every((m) => (m.ceiling?.approvers?.length ?? 0) === 1);
    });
    const marker = join(work, 'many');
    const call = { machines: ['vault', 'vault2'], command: `touch ${marker} && echo x >> ${join(work, 'many-count')}` };
    const pending = await callTool<{ status: string; approval_id: string }>(ai, 'exec_many', call);
    expect(pending.data.status).toBe('pending_approval');
    await page.goto(`${gw.url}/approvals/${pending.data.approval_id}`);
    await page.getByTestId('passkey-only').waitFor();
    await page.getByRole('button', { name: 'Approve with passkey' }).click();
    await page.getByText('Approved (not used yet)').waitFor();
    const ran = await callTool<{ results: { ok: boolean; error?: { code: string } }[]; succeeded: number }>(
      ai,
      'exec_many',
      call,
    );
    expect(ran.data.results.map((r) => r.error?.code ?? 'ok')).toEqual(['ok', 'ok']);
    expect(ran.data.succeeded).toBe(2);
    expect(readFileSync(join(work, 'many-count'), 'utf8')).toBe('x\nx\n');
  });

  test('job_start and write_file (approval.tools) run only with the passkey approval, bound to their exact requests', async () => {
    const approveInPage = async (approvalId: string) => {
      await page.goto(`${gw.url}/approvals/${approvalId}`);
      await page.getByTestId('passkey-only').waitFor();
      await page.getByRole('button', { name: 'Approve with passkey' }).click();
      await page.getByText('Approved (not used yet)').waitFor();
    };
    const jobMarker = join(work, 'job-ran');
    const job = { machine: 'vault', command: `touch ${jobMarker}` };
    const jobPending = await callTool<{ status: string; approval_id: string }>(ai, 'job_start', job);
    expect(jobPending.data.status).toBe('pending_approval');
    await approveInPage(jobPending.data.approval_id);
    const started = await callTool<{ job_id: string }>(ai, 'job_start', job);
    expect(started.ok).toBe(true);
    await waitFor('the approved job ran', () => existsSync(jobMarker));

    const file = join(work, 'written.txt');
    const write = { machine: 'vault', path: file, content: 'approved content' };
    const writePending = await callTool<{ status: string; approval_id: string }>(ai, 'write_file', write);
    expect(writePending.data.status).toBe('pending_approval');
    await approveInPage(writePending.data.approval_id);
    expect((await callTool(ai, 'write_file', write)).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('approved content');
  });
});
