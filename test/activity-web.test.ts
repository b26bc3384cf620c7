import { readFileSync } from 'node:fs';
import { AuditEventView } from '@letkite/protocol/api';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TestAccount, type TestPerson } from './support/approvals';
import { launchBrowser, newContext, screenshot } from './support/browser';
import { callTool, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';

/**
 * The Activity page in headless Chromium against a real gateway, agent and MCP client (issue #14): the filters
 * live in the URL, a call made while the page is open appears without a reload, a row opens to its full detail,
 * and the export downloads the rows.
 */
describe('the activity page', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let account: TestAccount;
  let owner: TestPerson;
  let ai: Client;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('webact');
    account = await TestAccount.open(gw);
    owner = await account.person('Olivia', 'owner');
    ai = await mcpClient(gw.url, await gw.apiToken('activity-web'));
    await machineOnline(ai, 'webact');
    await callTool(ai, 'exec', { machine: 'webact', command: 'echo first-call' });
    await callTool(ai, 'read_file', { machine: 'webact', path: '/etc/hostname' });
    browser = await launchBrowser();
    context = await newContext(browser);
    const [name, value] = owner.cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url: gw.url, httpOnly: true, sameSite: 'Lax' }]);
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await ai?.close();
    await agent?.dispose();
    await account?.close();
    await gw?.dispose();
  });

  test('filters in the URL, a live row, its detail, and the export download', async () => {
    const page = await context.newPage();
    await page.goto(`${gw.url}/activity?action=tool&tool=exec`);
    const rows = page.getByTestId('activity-row');
    await rows.first().waitFor();
    // The URL's filters are the form's values and the list's rows.
    expect(await page.locator('select[name=action]').inputValue()).toBe('tool');
    expect(await page.locator('input[name=tool]').inputValue()).toBe('exec');
    expect(await rows.count()).toBe(1);
    await expect.poll(() => page.getByTestId('live-state').textContent()).toBe('Live');

    // A call made now shows up without a reload, at the top.
    await callTool(ai, 'exec', { machine: 'webact', command: 'echo live-marker' });
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
    await rows.first().locator('.row-summary').click();
    const detail = page.getByTestId('activity-detail');
    await expect.poll(() => detail.textContent()).toContain('live-marker');
    await screenshot(page, 'activity-desktop');

    // Changing a filter changes the URL (so the view is a link), and back restores it.
    await page.locator('select[name=outcome]').selectOption('error');
    await expect.poll(() => new URL(page.url()).searchParams.get('outcome')).toBe('error');
    await expect.poll(() => rows.count()).toBe(0);
    await page.goBack();
    await expect.poll(() => rows.count()).toBe(2);

    // The export downloads the same rows as JSON lines.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-jsonl').click()]);
    expect(download.suggestedFilename()).toMatch(/^letkite-activity-.*\.jsonl$/);
    const file = await download.path();
    const exported = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => AuditEventView.parse(JSON.parse(l)));
    expect(exported.map((e) => e.tool)).toEqual(['exec', 'exec']);
    expect(JSON.stringify(exported.at(-1)?.details)).toContain('live-marker');
    // The chart counts the loaded tool calls.
    expect(await page.getByTestId('calls-chart').locator('svg').getAttribute('aria-label')).toBe(
      '2 tool calls in the last 24 hours',
    );
    await page.close();
  });

  test('an owner sets the retention on the page; the gateway keeps it and the chain still verifies', async () => {
    const page = await context.newPage();
    await page.goto(`${gw.url}/activity`);
    // People are picked by name (an owner may list them), not typed as ids.
    await expect
      .poll(() => page.locator('select[name=person] option').allTextContents(), { timeout: 15_000 })
      .toContain('Olivia');
    const card = page.getByTestId('retention');
    await expect.poll(() => card.textContent(), { timeout: 15_000 }).toContain('Every row is kept');
    await card.getByLabel('Keep rows for (days)').fill('45');
    await card.getByRole('button', { name: 'Keep for these days' }).click();
    await expect.poll(() => card.textContent(), { timeout: 15_000 }).toContain('older than 45 day(s)');
    const settings = await fetch(`${gw.url}/api/audit/settings`, { headers: { cookie: owner.cookie } });
    expect(await settings.json()).toEqual({ retention_days: 45 });
    const verify = await fetch(`${gw.url}/api/audit/verify`, { headers: { cookie: owner.cookie } });
    expect(await verify.json()).toMatchObject({ ok: true });
    await card.getByRole('button', { name: 'Keep everything' }).click();
    await expect.poll(() => card.textContent(), { timeout: 15_000 }).toContain('Every row is kept');
    await page.close();
  });

  test('the page fits a phone', async () => {
    const phone = await newContext(browser, 'phone');
    const [name, value] = owner.cookie.split('=') as [string, string];
    await phone.addCookies([{ name, value, url: gw.url, httpOnly: true, sameSite: 'Lax' }]);
    const page = await phone.newPage();
    await page.goto(`${gw.url}/activity`);
    await page.getByTestId('activity-row').first().waitFor();
    const size = await page.evaluate(() => ({ w: document.documentElement.scrollWidth, iw: window.innerWidth }));
    expect(size.w).toBeLessThanOrEqual(size.iw);
    await screenshot(page, 'activity-phone');
    await phone.close();
  });
});
