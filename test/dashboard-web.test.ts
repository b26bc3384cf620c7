import { generateKeyPairSync } from 'node:crypto';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { asPerson, TestAccount, type TestPerson } from './support/approvals';
import { launchBrowser, newContext, screenshot } from './support/browser';
import { callTool, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { consentJson, TestOAuthProvider } from './support/oauth-client';

// The dashboard in a real browser against a real gateway, a real agent and a real MCP client: what an owner sees
// first, the approvals badge, agent-reported names with hidden characters, and every page on a phone.

const RLO = '\u202E';
/** Polls wait this long: the machine is shared, and a page fetches its code and queries on first use. */
const BUSY = { timeout: 10_000 };
/**
 * A machine whose agent reports a host name and OS release that would read backwards without the U+202E shown.
 * It asks for the same trick in its name, which the gateway keeps plain (machine names are `[A-Za-z0-9._-]`).
 */
const SPOOF_NAME = `db-${RLO}gpj.exe`;
const SPOOF_HOST = `host${RLO}lmth.x`;
const SPOOF_RELEASE = `12 ${RLO}mrif`;
/** An MCP client that declares a name with the same trick. */
const SPOOF_CLIENT = `Claude ${RLO}redliub`;

async function signIn(context: BrowserContext, gw: TestGateway, person: TestPerson): Promise<void> {
  const [name, value] = person.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: gw.url, httpOnly: true, sameSite: 'Lax' }]);
}

/** Enrolls a machine over the agent API without running an agent: it stays offline. */
async function enrollOffline(gw: TestGateway, name: string, hostname: string): Promise<void> {
  const token = await gw.joinToken();
  const res = await fetch(`${gw.url}/agent/v1/enroll`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      join_token: token,
      public_key: generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      info: { hostname, os: 'linux', os_release: SPOOF_RELEASE, arch: 'x64', version: '0.1.0', protocol: 1 },
      name,
    }),
  });
  expect(res.status).toBe(200);
}

/** True when nothing on the page is wider than the window (no sideways scrolling on a phone). */
async function fitsWidth(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  await page.waitForLoadState('networkidle');
  await page
    .locator('.loading')
    .first()
    .waitFor({ state: 'detached', timeout: 5_000 })
    .catch(() => {});
  return page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
}

describe('the dashboard: overview, approvals badge, visible names, phone layouts', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let account: TestAccount;
  let owner: TestPerson;
  let requester: TestPerson;
  let ai: Client;
  let browser: Browser;
  let desktop: Page;
  let phone: Page;
  let approvalId = '';

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('web1');
    account = await TestAccount.open(gw);
    owner = await account.person('Olivia', 'owner');
    requester = await account.person('Rita', 'member', { permissions: ['machines.view', 'clients.connect'] });
    const token = await account.token(requester.userId, {
      name: 'ask-first',
      shell: 'full',
      files: [{ path: '*', access: 'rw' }],
      commands: { mode: 'shell', default: 'approve' },
      approval: { approvers: 'connector', timeout: '10m' },
    });
    ai = await mcpClient(gw.url, token.token);
    await machineOnline(ai, 'web1');
    await enrollOffline(gw, SPOOF_NAME, SPOOF_HOST);

    // A real OAuth connection whose client declares a spoofing name.
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback', undefined, SPOOF_CLIENT);
    const serverUrl = `${gw.url}/mcp`;
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
    const consent = await consentJson(gw, owner, provider.authorizationUrl as URL, {
      groups: [],
      machines: { kind: 'all' },
      policy: 'read-only',
    });
    expect(consent.status).toBe(200);
    const code = (consent.redirectTo as URL).searchParams.get('code') as string;
    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');

    browser = await launchBrowser();
    const desktopCtx = await newContext(browser, 'desktop');
    await signIn(desktopCtx, gw, owner);
    desktop = await desktopCtx.newPage();
    const phoneCtx = await newContext(browser, 'phone');
    await signIn(phoneCtx, gw, owner);
    phone = await phoneCtx.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await ai?.close();
    await account?.close();
    await agent?.dispose();
    await gw?.dispose();
  });

  test('the overview counts machines online and offline, connections, and nothing waiting', async () => {
    await desktop.goto(`${gw.url}/`);
    // The first load fetches the page's code and four queries: give a busy machine time.
    const slow = { timeout: 15_000 };
    await expect.poll(() => desktop.getByTestId('stat-online').locator('.stat-value').textContent(), slow).toBe('1');
    // Each count comes from its own query: wait for each rather than for the first.
    const stat = (id: string) => desktop.getByTestId(id).locator('.stat-value').textContent();
    await expect.poll(() => stat('stat-offline'), slow).toBe('1');
    await expect.poll(() => stat('stat-connections'), slow).toBe('1');
    await expect.poll(() => stat('stat-waiting'), slow).toBe('0');
    expect(await desktop.getByTestId('approvals-badge').count()).toBe(0);
    // Online machines first.
    const machines = desktop.getByTestId('overview-machine');
    expect(await machines.count()).toBe(2);
    expect(await machines.first().textContent()).toContain('web1');
    await screenshot(desktop, 'dashboard-overview-desktop');
  });

  test('an AI call that needs approval shows up in the badge and the overview without a reload', async () => {
    const pending = await callTool(ai, 'exec', { machine: 'web1', command: 'systemctl restart nginx' });
    expect(pending.data).toMatchObject({ status: 'pending_approval' });
    approvalId = (pending.data as { approval_id: string }).approval_id;
    // The owner decides under `connector` (owners and admins too); the badge polls, so no reload here.
    const badge = desktop.getByTestId('approvals-badge');
    await expect.poll(() => badge.textContent(), { timeout: 30_000 }).toMatch(/^1/);
    await expect.poll(() => desktop.getByTestId('stat-waiting').locator('.stat-value').textContent(), BUSY).toBe('1');
    const row = desktop.getByTestId('overview-approval');
    expect(await row.textContent()).toContain('systemctl restart nginx');
    expect(await row.textContent()).toContain('exec');
    await screenshot(desktop, 'dashboard-overview-waiting-desktop');
  });

  test('the approvals list shows the tool, the machine and the command', async () => {
    await desktop.getByRole('link', { name: /^Approvals/ }).click();
    const row = desktop.getByTestId('approval-row').first();
    await row.waitFor();
    expect(await row.getByTestId('approval-tool').textContent()).toBe('exec');
    expect(await row.getByTestId('approval-machine').textContent()).toBe('web1');
    expect(await row.getByTestId('approval-command').textContent()).toBe('systemctl restart nginx');
    await screenshot(desktop, 'dashboard-approvals-desktop');
  });

  test('denying it on its page clears the badge', async () => {
    await desktop.getByTestId('approval-row').first().getByRole('link').click();
    await desktop.waitForURL(new RegExp(`/approvals/${approvalId}$`));
    await desktop.getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => desktop.getByTestId('approval-status').textContent(), BUSY).toBe('Denied');
    await expect.poll(() => desktop.getByTestId('approvals-badge').count(), BUSY).toBe(0);
  });

  test("the overview shows the recent activity: the AI's call waiting for approval and the denial", async () => {
    await desktop.goto(`${gw.url}/`);
    const rows = desktop.getByTestId('overview-activity');
    await expect.poll(() => rows.count(), BUSY).toBeGreaterThan(0);
    const texts = await rows.allTextContents();
    expect(texts.some((t) => t.includes('approval.deny') && t.includes('Olivia'))).toBe(true);
    const call = rows.filter({ hasText: 'exec on web1' }).first();
    expect(await call.textContent()).toContain('exec on web1 · Rita');
    expect(await call.getAttribute('data-outcome')).toBe('approval_pending');
  });

  test('agent-reported names with U+202E are shown with the character visible, never applied', async () => {
    await desktop.goto(`${gw.url}/machines`);
    const card = desktop.getByTestId('machine').filter({ hasText: 'gpj.exe' });
    await card.waitFor();
    expect(await card.getByTestId('machine-name').textContent()).toMatch(/^db-+gpj\.exe$/);
    const host = card.getByTestId('machine-hostname');
    expect(await host.textContent()).toBe('host<U+202E>lmth.x');
    expect(await host.locator('mark.invisible-char').textContent()).toBe('<U+202E>');
    expect(await card.getByTestId('machine-os').textContent()).toBe('linux · 12 <U+202E>mrif · x64');
    // The raw character is nowhere in the page's text, so nothing on screen reads reversed.
    expect(await desktop.evaluate(() => (document.body.textContent ?? '').includes('\u202E'))).toBe(false);

    await desktop.goto(`${gw.url}/`);
    const row = desktop.getByTestId('overview-machine').filter({ hasText: 'gpj.exe' });
    expect(await row.textContent()).toContain('host<U+202E>lmth.x');
    expect(await desktop.evaluate(() => (document.body.textContent ?? '').includes('\u202E'))).toBe(false);
    expect(await desktop.getByTestId('overview-connection').textContent()).toContain('Claude <U+202E>redliub');

    await desktop.goto(`${gw.url}/connections`);
    const connection = desktop.getByTestId('connection');
    await connection.waitFor();
    expect(await connection.locator('h2').textContent()).toContain('Claude <U+202E>redliub');
    expect(await desktop.evaluate(() => (document.body.textContent ?? '').includes('\u202E'))).toBe(false);
    await screenshot(desktop, 'dashboard-connections-desktop');
  });

  test('the effective ceiling reads as rows in words, not JSON', async () => {
    await desktop.goto(`${gw.url}/machines`);
    const card = desktop.getByTestId('machine').filter({ hasText: 'web1' });
    await card.locator('summary').click();
    const rows = card.getByTestId('ceiling-rows');
    await rows.waitFor();
    const text = (await rows.innerText()).replace(/\s+/g, ' ');
    // The agent runs with FULL_SHELL_CEILING: shell full, every path read-write, nothing hidden.
    expect(text).toContain('Shell full — commands run unsandboxed');
    expect(text).toContain('Files 1 rule');
    expect(text).toContain('* — read and write');
    expect(text).toContain('Terminals allowed');
    expect(text).not.toMatch(/[{}[\]"]/);
    // The rows stay inside their card, and the page inside the window.
    const cardBox = await card.boundingBox();
    const rowsBox = await rows.boundingBox();
    expect(rowsBox && cardBox && rowsBox.x + rowsBox.width <= cardBox.x + cardBox.width).toBe(true);
    const size = await fitsWidth(desktop);
    expect(size.scrollWidth).toBeLessThanOrEqual(size.innerWidth);
    await screenshot(desktop, 'dashboard-machines-desktop');
  });

  // Every page in the navigation (pages other parts add show up here by themselves) plus these.
  const phonePages = ['/', '/machines', '/members', '/roles', '/tokens', '/security', '/connections', '/approvals'];
  test('every page in the navigation fits a 390 px phone without sideways scrolling', async () => {
    await phone.goto(`${gw.url}/`);
    await phone.locator('main h1').first().waitFor();
    const nav = await phone
      .locator('nav[aria-label="Main"] a')
      .evaluateAll((links) => links.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
    expect(nav).toEqual(expect.arrayContaining(phonePages));
    const overflowing: string[] = [];
    for (const path of new Set([...phonePages, ...nav])) {
      await phone.goto(`${gw.url}${path}`);
      await phone.locator('main h1').first().waitFor();
      const { scrollWidth, innerWidth } = await fitsWidth(phone);
      expect(innerWidth).toBe(390);
      if (scrollWidth > innerWidth) overflowing.push(`${path}: ${scrollWidth} px`);
      await screenshot(phone, `dashboard-phone${path === '/' ? '-overview' : path.replace(/\//g, '-')}`);
    }
    expect(overflowing).toEqual([]);
  });

  test('a session revoked elsewhere sends the open page to sign-in at its next request', async () => {
    const person = await account.person('Sam', 'member', { permissions: ['machines.view'] });
    const ctx = await newContext(browser, 'desktop');
    await signIn(ctx, gw, person);
    const page = await ctx.newPage();
    await page.goto(`${gw.url}/machines`);
    await page.getByTestId('machine').first().waitFor();
    const sessions = await asPerson(gw, person, 'GET', '/api/me/sessions');
    const id = (sessions.body.sessions as { id: string }[])[0]?.id;
    expect((await asPerson(gw, person, 'DELETE', `/api/me/sessions/${id}`)).status).toBe(200);
    // An in-app navigation: the next page's request is refused, and the app notices by itself.
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.waitForURL(/\/sign-in\?next=/);
    await ctx.close();
  });

  test('an approval page fits a phone, and the members table becomes one card per person', async () => {
    await phone.goto(`${gw.url}/approvals/${approvalId}`);
    await phone.getByTestId('approval-status').waitFor();
    let size = await fitsWidth(phone);
    expect(size.scrollWidth).toBeLessThanOrEqual(size.innerWidth);

    await phone.goto(`${gw.url}/members`);
    const rows = phone.getByTestId('member-row');
    await expect.poll(() => rows.count(), BUSY).toBeGreaterThanOrEqual(2);
    // Stacked: the role control sits under the name, not beside it in a wide row.
    const nameBox = await rows.first().locator('td').first().boundingBox();
    const roleBox = await rows.first().locator('select').boundingBox();
    expect(roleBox && nameBox && roleBox.y > nameBox.y).toBe(true);
    size = await fitsWidth(phone);
    expect(size.scrollWidth).toBeLessThanOrEqual(size.innerWidth);
  });
  test('an owner renames a machine on its card; a bad name is refused with the reason; the AI reaches the new name', async () => {
    await desktop.goto(`${gw.url}/machines`);
    const id = await desktop.getByTestId('machine').filter({ hasText: 'web1' }).getAttribute('data-machine-id');
    // By id: while the name is being edited the card shows no name to find it by.
    const card = desktop.locator(`[data-machine-id="${id}"]`);
    await card.getByRole('button', { name: 'Rename web1' }).click();
    const input = card.getByLabel('New name for web1');
    await input.fill('bad name!');
    await card.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => card.getByRole('alert').textContent(), BUSY).toMatch(/name/i);
    await input.fill('web-primary');
    await card.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => card.getByTestId('machine-name').textContent(), BUSY).toBe('web-primary');
    expect(
      await desktop
        .getByTestId('machine-name')
        .filter({ hasText: /^web1$/ })
        .count(),
    ).toBe(0);
    const listed = await callTool<{ machines: { name: string }[] }>(ai, 'machines_list', {});
    expect(listed.data.machines.map((m) => m.name)).toContain('web-primary');
    await screenshot(desktop, 'dashboard-machine-renamed-desktop');
  });
});
