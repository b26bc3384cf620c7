import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { createOwnerSetupLink, openIdentityStore, openStore } from '@letkite/gateway';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Secret, TOTP } from 'otpauth';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchBrowser, newContext, pageFetch, screenshot, VirtualAuthenticator } from './support/browser';
import { callTool, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { waitFor } from './support/processes';
import { TestSmtp } from './support/smtp';

const OWNER = { name: 'Olivia Owner', email: 'olivia@example.com', password: 'a long owner password' };
const MEMBER = { name: 'Max Member', email: 'max@example.com' };
const HOSTILE_HOST = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';

/** The one-time owner setup link, as `npm start` prints it (made through the gateway's own code). */
async function ownerSetupLink(gw: TestGateway): Promise<string> {
  const store = await openStore(join(gw.dataDir, 'letkite.db'));
  try {
    const { account, owner } = await store.bootstrap(new Date().toISOString());
    const link = await createOwnerSetupLink(
      { identity: openIdentityStore(store), now: new Date(), publicUrl: gw.url },
      { accountId: account.id, ownerId: owner.id },
    );
    if (!link) throw new Error('the owner is already set up');
    return link.url;
  } finally {
    await store.close();
  }
}

function totpCode(secret: string, stepsAhead = 0): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + stepsAhead * 30_000 });
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/sign-in/);
}

describe('people in the web app: setup, sign-in, invitations, rights and revocation', () => {
  let gw: TestGateway;
  let smtp: TestSmtp;
  let browser: Browser;
  let ownerCtx: BrowserContext;
  let owner: Page;
  let ownerKey: VirtualAuthenticator;
  let memberCtx: BrowserContext;
  let member: Page;
  let agent: TestAgent;
  let totpSecret = '';
  let maxToken = '';
  const clients: Client[] = [];

  beforeAll(async () => {
    smtp = await TestSmtp.start();
    gw = await TestGateway.start(smtp.env);
    browser = await launchBrowser();
    ownerCtx = await newContext(browser, 'desktop');
    owner = await ownerCtx.newPage();
    ownerKey = await VirtualAuthenticator.attach(owner);
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await browser?.close();
    await agent?.dispose();
    await gw?.dispose();
    await smtp?.close();
  });

  test('the owner sets up the account with a passkey from the one-time link', async () => {
    const link = await ownerSetupLink(gw);
    expect(link).toMatch(new RegExp(`^${gw.url}/setup#lksetup_`));
    await owner.goto(link);
    await owner.getByLabel('Your name').fill(OWNER.name);
    await owner.getByLabel('E-mail').fill(OWNER.email);
    await screenshot(owner, 'setup-desktop');
    await owner.getByRole('button', { name: 'Create a passkey' }).click();
    await expect.poll(() => owner.getByTestId('signed-in-as').textContent()).toBe(OWNER.name);
    expect(await ownerKey.credentials()).toHaveLength(1);
    // The link worked once.
    const again = await owner.context().newPage();
    await again.goto(link);
    await again.getByRole('heading', { name: 'This link does not work' }).waitFor();
    await again.close();
  });

  test('the owner signs in again with the passkey, and a refused verification signs nobody in', async () => {
    await signOut(owner);
    await ownerKey.setUserVerified(false);
    await owner.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await owner.getByRole('alert').waitFor();
    expect(await owner.getByTestId('signed-in-as').count()).toBe(0);
    await ownerKey.setUserVerified(true);
    await owner.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await expect.poll(() => owner.getByTestId('signed-in-as').textContent()).toBe(OWNER.name);
    await screenshot(owner, 'machines-empty-desktop');
  });

  test('password + TOTP signs in, and the same code replayed is refused', async () => {
    await owner.goto(`${gw.url}/security`);
    await owner.getByRole('button', { name: 'Set up password and authenticator' }).click();
    totpSecret = (await owner.getByTestId('totp-secret').first().textContent()) ?? '';
    expect(totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    await owner.getByLabel('New password').fill(OWNER.password);
    await owner.getByLabel('Code from the app').fill(totpCode(totpSecret));
    await owner.getByRole('button', { name: 'Save password and authenticator' }).click();
    await owner.getByTestId('recovery-codes').waitFor();
    await screenshot(owner, 'security-desktop');
    await signOut(owner);

    // The setup used this time step's code; the next step's code is within the ±1 window and unused.
    const code = totpCode(totpSecret, 1);
    const signIn = async () => {
      await owner.getByLabel('E-mail').fill(OWNER.email);
      await owner.getByLabel('Password').fill(OWNER.password);
      await owner.getByLabel('Authenticator code').fill(code);
      await owner.getByRole('button', { name: 'Sign in with password' }).click();
    };
    await signIn();
    await expect.poll(() => owner.getByTestId('signed-in-as').textContent()).toBe(OWNER.name);
    await signOut(owner);
    await signIn();
    await expect.poll(() => owner.getByRole('alert').textContent()).toContain('wrong e-mail, password or code');
    // The owner signs back in with the passkey for the rest of the suite.
    await owner.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await expect.poll(() => owner.getByTestId('signed-in-as').textContent()).toBe(OWNER.name);
  });

  test('an invited member receives the e-mail, follows the link and joins with a passkey', async () => {
    await owner.goto(`${gw.url}/roles`);
    await owner.getByLabel('New role name').fill('approver');
    await owner.getByRole('checkbox', { name: 'approvals.decide' }).check();
    await owner.getByRole('button', { name: 'Create role' }).click();
    await owner.getByText('approver', { exact: true }).waitFor();

    await owner.goto(`${gw.url}/members`);
    await owner.getByLabel('E-mail').fill(MEMBER.email);
    await owner.locator('select[name="invite-role"]').selectOption({ label: 'approver (custom)' });
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await owner.getByText(`Invitation e-mailed to ${MEMBER.email}.`).waitFor();
    await screenshot(owner, 'members-desktop');

    const mail = await smtp.waitForMail(MEMBER.email, /invited you/);
    const link = TestSmtp.linkIn(mail, `${gw.url}/invite#`);

    memberCtx = await newContext(browser, 'phone');
    member = await memberCtx.newPage();
    await VirtualAuthenticator.attach(member);
    await member.goto(link);
    await member.getByLabel('Your name').fill(MEMBER.name);
    expect(await member.getByLabel('E-mail').inputValue()).toBe(MEMBER.email);
    await screenshot(member, 'invite-phone');
    await member.getByRole('button', { name: 'Create a passkey' }).click();
    await expect.poll(() => member.getByTestId('signed-in-as').textContent()).toBe(MEMBER.name);
    const session = await pageFetch(member, 'GET', '/api/session');
    expect((session.body.user as { permissions: string[] }).permissions).toEqual(['approvals.decide']);
  });

  test('a member without clients.connect cannot create an API token', async () => {
    await member.goto(`${gw.url}/tokens`);
    await member.getByText('Creating tokens needs the clients.connect permission.').waitFor();
    await screenshot(member, 'tokens-denied-phone');
    const r = await pageFetch(member, 'POST', '/api/tokens', { name: 'sneaky' });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'clients.connect' } });
  });

  test('agent-reported markup in a host name is shown as text, never run', async () => {
    const join = await pageFetch(owner, 'POST', '/api/machines/enroll', {});
    const token = String(join.body.token);
    const res = await fetch(`${gw.url}/agent/v1/enroll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        join_token: token,
        public_key: generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
        info: {
          hostname: HOSTILE_HOST,
          os: 'linux',
          os_release: '<b>bold</b>',
          arch: 'x64',
          version: '0.1.0',
          protocol: 1,
        },
        name: 'hostile',
      }),
    });
    expect(res.status).toBe(200);
    await owner.goto(`${gw.url}/machines`);
    const host = owner.getByTestId('machine-hostname');
    await expect.poll(() => host.first().textContent()).toBe(HOSTILE_HOST);
    expect(await owner.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await owner.locator('.machine script, .machine img, .machine b').count()).toBe(0);
    await screenshot(owner, 'machines-desktop');
  });

  test('a member outside a group cannot reach the machine the group claims, even with an API token', async () => {
    agent = await gw.addAgent('secret-box');
    const machines = await pageFetch(owner, 'GET', '/api/machines');
    const box = (machines.body.machines as { id: string; name: string }[]).find((m) => m.name === 'secret-box');
    expect(box).toBeDefined();
    const members = await pageFetch(owner, 'GET', '/api/members');
    const ids = members.body.members as { id: string; email: string }[];
    const maxId = ids.find((m) => m.email === MEMBER.email)?.id;
    const ownerId = ids.find((m) => m.email === OWNER.email)?.id;
    // Max becomes a plain member (who may connect clients); the group "ops" claims secret-box without him.
    expect((await pageFetch(owner, 'PATCH', `/api/members/${maxId}`, { role: 'member' })).status).toBe(200);
    const group = await pageFetch(owner, 'POST', '/api/groups', {
      name: 'ops',
      member_ids: [ownerId],
      machine_ids: [box?.id],
    });
    expect(group.status).toBe(200);

    await member.goto(`${gw.url}/tokens`);
    await member.getByLabel('Name').fill('max laptop');
    await member.getByLabel('Policy').selectOption('full');
    await member.getByRole('button', { name: 'Create token' }).click();
    const token = (await member.getByTestId('new-token').textContent()) ?? '';
    expect(token).toMatch(/^lk_/);
    maxToken = token;
    await screenshot(member, 'tokens-phone');

    const maxClient = await mcpClient(gw.url, token);
    clients.push(maxClient);
    const listed = await callTool<{ machines: { name: string }[] }>(maxClient, 'machines_list', {});
    expect(listed.data.machines.map((m) => m.name)).not.toContain('secret-box');
    const refused = await callTool(maxClient, 'exec', { machine: 'secret-box', command: 'echo hi' });
    expect(refused.error?.code).toBe('machine_not_found');

    // The owner (in the group, and an owner) reaches it.
    const ownerToken = await gw.apiToken('owner');
    const ownerClient = await mcpClient(gw.url, ownerToken);
    clients.push(ownerClient);
    await waitFor('secret-box online', async () => {
      const r = await callTool<{ machines: { name: string; online: boolean }[] }>(ownerClient, 'machines_list', {});
      return r.data.machines.some((m) => m.name === 'secret-box' && m.online);
    });
    const ran = await callTool<{ stdout: string }>(ownerClient, 'exec', { machine: 'secret-box', command: 'echo hi' });
    expect(ran.data.stdout).toBe('hi\n');

    // Once Max joins the group, the machine is his to reach too.
    await pageFetch(owner, 'PUT', `/api/groups/${group.body.id}`, {
      name: 'ops',
      member_ids: [ownerId, maxId],
      machine_ids: [box?.id],
    });
    const now = await callTool<{ machines: { name: string }[] }>(maxClient, 'machines_list', {});
    expect(now.data.machines.map((m) => m.name)).toContain('secret-box');
  });

  test('the tokens page makes a token for chosen machines and tool groups only', async () => {
    await owner.goto(`${gw.url}/tokens`);
    await owner.getByLabel('Name').fill('files on secret-box');
    await owner.getByLabel('Policy').selectOption('full');
    await owner.getByLabel('Only these:').check();
    await owner.getByLabel('secret-box').check();
    await owner.getByLabel('Only these groups:').check();
    await owner.getByLabel('Read and write files').check();
    await owner.getByRole('button', { name: 'Create token' }).click();
    const token = (await owner.getByTestId('new-token').textContent()) ?? '';
    expect(token).toMatch(/^lk_/);
    await screenshot(owner, 'tokens-scoped-desktop');

    const client = await mcpClient(gw.url, token);
    clients.push(client);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('read_file');
    expect(names).toContain('machines_list');
    expect(names).not.toContain('exec');
    const listed = await callTool<{ machines: { name: string }[] }>(client, 'machines_list', {});
    expect(listed.data.machines.map((m) => m.name)).toEqual(['secret-box']);
  });
  test("revoking a session cuts the person's open MCP session at once", async () => {
    const token = await pageFetch(member, 'POST', '/api/tokens', { name: 'revoke test', policy: 'read-only' });
    const client = await mcpClient(gw.url, String(token.body.token));
    clients.push(client);
    expect((await callTool(client, 'machines_list', {})).ok).toBe(true);

    await member.goto(`${gw.url}/security`);
    await screenshot(member, 'security-phone');
    await member.getByTestId('session-row').getByRole('button', { name: 'Revoke' }).click();
    await member.waitForURL(/\/sign-in/);
    await expect(client.callTool({ name: 'machines_list', arguments: {} })).rejects.toThrow();
    // The token itself stays valid: a new MCP session opens.
    const again = await mcpClient(gw.url, String(token.body.token));
    clients.push(again);
    expect((await callTool(again, 'machines_list', {})).ok).toBe(true);
  });

  test('removing a member ends their MCP sessions and their tokens', async () => {
    const maxClient = await mcpClient(gw.url, maxToken);
    clients.push(maxClient);
    expect((await callTool(maxClient, 'machines_list', {})).ok).toBe(true);
    const members = await pageFetch(owner, 'GET', '/api/members');
    const maxId = (members.body.members as { id: string; email: string }[]).find((m) => m.email === MEMBER.email)?.id;
    expect((await pageFetch(owner, 'DELETE', `/api/members/${maxId}`)).status).toBe(200);
    await expect(maxClient.callTool({ name: 'machines_list', arguments: {} })).rejects.toThrow();
    await expect(mcpClient(gw.url, maxToken)).rejects.toThrow();
    const after = await pageFetch(owner, 'GET', '/api/tokens');
    const revoked = (after.body.tokens as { name: string; revoked_at: string | null }[]).find(
      (t) => t.name === 'max laptop',
    );
    expect(revoked?.revoked_at).not.toBeNull();
  });

  test('repeated wrong passwords from one address make it wait, even for the right password', async () => {
    const page = await (await newContext(browser)).newPage();
    await page.goto(`${gw.url}/sign-in`);
    // Five tries from an address, then it waits (the replayed code above already counted as one).
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await pageFetch(page, 'POST', '/api/auth/password', {
        email: OWNER.email,
        password: `wrong guess ${i}`,
        code: '000000',
      });
      codes.push((r.body.error as { code: string }).code);
    }
    expect(codes.slice(0, 4)).toEqual(Array(4).fill('unauthenticated'));
    const right = await pageFetch(page, 'POST', '/api/auth/password', {
      email: OWNER.email,
      password: OWNER.password,
      code: totpCode(totpSecret),
    });
    expect(right.status).toBe(429);
    expect(right.body.error).toMatchObject({ code: 'rate_limited', details: { retry_after_s: expect.any(Number) } });
    await page.context().close();
  });

  test('pages carry a strict CSP and refuse framing', async () => {
    const res = await fetch(`${gw.url}/members`);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const api = await fetch(`${gw.url}/api/nothing-here`);
    expect(api.status).toBe(404);
  });
});
