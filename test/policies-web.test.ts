import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { asPerson, TestAccount, type TestPerson } from './support/approvals';
import { launchBrowser, newContext, screenshot } from './support/browser';
import { callTool, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';

// The Policies and Account settings pages in a real browser against a real gateway, agent and MCP client: an
// owner edits a policy in the page and the AI's next call follows it; a switch stops an open session.

const policy = (echo: 'allow' | 'deny') => `name = "web-ops"
shell = "full"
files = [ { path = "*", access = "ro" } ]

[commands]
default = "deny"
rules = [ { match = "echo *", verdict = "${echo}" } ]
`;

async function signIn(context: BrowserContext, gw: TestGateway, person: TestPerson): Promise<void> {
  const [name, value] = person.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: gw.url, httpOnly: true, sameSite: 'Lax' }]);
}

describe('the Policies page and the account switches in a browser', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let account: TestAccount;
  let owner: TestPerson;
  let browser: Browser;
  let page: Page;
  let ai: Client;
  let token = '';

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('web1');
    account = await TestAccount.open(gw);
    owner = await account.person('Olivia', 'owner');
    browser = await launchBrowser();
    const context = await newContext(browser);
    await signIn(context, gw, owner);
    page = await context.newPage();
  });

  afterAll(async () => {
    await ai?.close().catch(() => {});
    await browser?.close();
    await account?.close();
    await agent?.dispose();
    await gw?.dispose();
  });

  const editor = () => page.getByTestId('policy-source');

  test('a new policy with bad TOML shows the error at its line; fixed, it is created', async () => {
    await page.goto(`${gw.url}/policies`);
    await page.getByTestId('policy-full').waitFor();
    await page.getByTestId('policy-new').click();
    await editor().fill('name = "web-ops"\nshell = "sometimes"\n');
    const issue = page.getByTestId('policy-issue').first();
    await expect.poll(() => issue.textContent(), { timeout: 10_000 }).toContain('line 2');
    expect(await issue.textContent()).toContain('shell');
    expect(await page.getByTestId('policy-save').isDisabled()).toBe(true);
    await page.locator('.gutter .bad').first().waitFor();
    await screenshot(page, 'policies-inline-error');

    await editor().fill(policy('allow'));
    await page.getByTestId('policy-valid').waitFor({ timeout: 10_000 });
    await page.getByTestId('policy-save').click();
    await page.getByTestId('policy-web-ops').waitFor();
    const shown = await asPerson(gw, owner, 'GET', '/api/policies/web-ops');
    expect((shown.body.policy as { version: number }).version).toBe(1);
  });

  test('the AI connected with the policy runs what it allows; edited in the page, its next call is refused', async () => {
    const made = await asPerson(gw, owner, 'POST', '/api/tokens', { name: 'web-ai', policy: 'web-ops', scopes: '*' });
    token = (made.body as { token: string }).token;
    ai = await mcpClient(gw.url, token);
    await machineOnline(ai, 'web1');
    const before = await callTool<{ stdout: string }>(ai, 'exec', { machine: 'web1', command: 'echo from-v1' });
    expect(before.data.stdout).toBe('from-v1\n');

    await page.getByTestId('policy-web-ops').click();
    await expect.poll(() => editor().inputValue()).toContain('verdict = "allow"');
    await editor().fill(policy('deny'));
    await page.getByTestId('policy-valid').waitFor({ timeout: 10_000 });
    await page.getByTestId('policy-save').click();
    await expect.poll(async () => page.locator('.policy-list').textContent()).toContain('v2');

    const after = await callTool(ai, 'exec', { machine: 'web1', command: 'echo from-v2' });
    expect(after.error?.code).toBe('blocked_by_policy');

    // The diff between the two versions shows the changed rule.
    const diff = page.getByTestId('policy-diff');
    await expect.poll(() => diff.textContent()).toContain('- rules = [ { match = "echo *", verdict = "allow" } ]');
    await expect.poll(() => diff.textContent()).toContain('+ rules = [ { match = "echo *", verdict = "deny" } ]');
    expect(await diff.textContent()).toContain('  name = "web-ops"');
  });

  test('the rule tester judges a command on a machine with every reason', async () => {
    await page.locator('select[name="tester-machine"]').selectOption({ label: 'web1' });
    await page.locator('textarea[name="tester-commands"]').fill('echo hi\nls /');
    await page.getByTestId('tester-run').click();
    const results = page.getByTestId('tester-result');
    await results.nth(1).waitFor();
    expect(await results.nth(0).getAttribute('data-verdict')).toBe('deny');
    expect(await results.nth(0).textContent()).toContain('rule "echo *"');
    expect(await results.nth(1).getAttribute('data-verdict')).toBe('deny');
    expect(await page.locator('.rule-tester').textContent()).toContain('ceiling reported');
    await screenshot(page, 'policies-rule-tester');
  });

  test('the common keys form shows the policy and writes its choices into the TOML', async () => {
    const form = page.locator('details.policy-form');
    await form.locator('summary').click();
    const choice = (name: string) => form.locator(`select[name="form-${name}"]`);
    await expect.poll(() => choice('shell').inputValue()).toBe('full');
    expect(await choice('default').inputValue()).toBe('deny');
    expect(await choice('default').locator('option').allTextContents()).toEqual([
      'allow',
      'confirm',
      'approve',
      'deny',
    ]);
    await choice('gui').selectOption('observe');
    // A check of the source that reads the same policy (here: a comment typed) keeps the choices being made.
    const checked = page.waitForResponse((r) => r.url().endsWith('/api/policies/validate'));
    await editor().fill(`${await editor().inputValue()}# a comment\n`);
    await checked;
    expect(await choice('gui').inputValue()).toBe('observe');
    await choice('approvers').selectOption('any_admin');
    await choice('default').selectOption('approve');
    await page.getByTestId('form-write').click();
    await expect.poll(() => editor().inputValue()).toContain('gui = "observe"');
    const written = await editor().inputValue();
    expect(written).toContain('approvers = "any_admin"');
    expect(written).toContain('default = "approve"');
    expect(written).toContain('shell = "full"');
    // Back to the saved source, so nothing of this is kept.
    await editor().fill(policy('deny'));
  });

  test('the token form offers account policies and only the tool groups the chosen one can use', async () => {
    await page.goto(`${gw.url}/tokens`);
    const select = page.locator('select[name="token-policy"]');
    await expect.poll(() => select.locator('option').allTextContents()).toContain('web-ops');
    await page.locator('input[name="token-tools"]').nth(1).check();
    await select.selectOption('read-only');
    const offered = () =>
      page.locator('input[name="token-group"]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    await expect.poll(offered).toContain('files');
    expect(await offered()).not.toContain('commands');
    await select.selectOption('web-ops');
    await expect.poll(offered).toContain('commands');
  });

  test('switching MCP over HTTP off on the Account settings page stops the open session', async () => {
    expect((await callTool(ai, 'machines_list', {})).ok).toBe(true);
    await page.goto(`${gw.url}/account-settings`);
    const http = page.locator('input[name="switch-mcp_http"]');
    await expect.poll(() => http.isChecked(), { timeout: 10_000 }).toBe(true);
    await http.click();
    await expect.poll(() => http.isChecked()).toBe(false);
    await expect
      .poll(async () => (await asPerson(gw, owner, 'GET', '/api/account/settings')).body.settings)
      .toMatchObject({ mcp_http: false });
    await screenshot(page, 'account-settings');
    await expect(callTool(ai, 'machines_list', {})).rejects.toThrow();
    await http.click();
    await expect.poll(() => http.isChecked()).toBe(true);
  });
});
