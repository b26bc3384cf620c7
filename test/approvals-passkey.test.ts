import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TestAccount, TestMailbox, type TestPerson } from './support/approvals';
import { callTool, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir } from './support/processes';

/** A P-256 key pair as a COSE public key (what the gateway stores) and PKCS#8 (what the authenticator holds). */
function passkeyKeys(): { cose: Buffer; pkcs8: Buffer } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const x = Buffer.from(jwk.x ?? '', 'base64url');
  const y = Buffer.from(jwk.y ?? '', 'base64url');
  // CBOR map {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}
  const cose = Buffer.concat([
    Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
    x,
    Buffer.from([0x22, 0x58, 0x20]),
    y,
  ]);
  return { cose, pkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }) };
}

describe('approvals: a person approves from the e-mail link with a passkey in a real browser', () => {
  let gw: TestGateway;
  let mailbox: TestMailbox;
  let account: TestAccount;
  let agent: TestAgent;
  let approver: TestPerson;
  let requester: TestPerson;
  let ai: Client;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let authenticatorId: string;
  let cdp: Awaited<ReturnType<BrowserContext['newCDPSession']>>;
  const work = tempDir('approvals-passkey');

  beforeAll(async () => {
    mailbox = await TestMailbox.start();
    gw = await TestGateway.start(mailbox.env);
    agent = await gw.addAgent('web1');
    account = await TestAccount.open(gw);
    approver = await account.person('Petra', 'owner');
    requester = await account.person('Rui', 'member', { permissions: ['machines.view', 'clients.connect'] });
    const token = await account.token(requester.userId, {
      name: 'ops',
      shell: 'full',
      files: [{ path: '*', access: 'rw' }],
      commands: { mode: 'shell', default: 'allow', rules: [{ match: 'touch *', verdict: 'approve' }] },
      approval: { approvers: 'any_admin', timeout: '10m' },
    });
    ai = await mcpClient(gw.url, token.token);
    await machineOnline(ai, 'web1');

    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await context.addCookies([
      {
        name: 'letkite_session',
        value: approver.cookie.split('=')[1] ?? '',
        url: gw.url,
        httpOnly: true,
        sameSite: 'Lax',
      },
    ]);
    page = await context.newPage();
    cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }));
    // The approver's passkey: the private half in the virtual authenticator, the public half in their account.
    const keys = passkeyKeys();
    const credentialId = randomBytes(16);
    await cdp.send('WebAuthn.addCredential', {
      authenticatorId,
      credential: {
        credentialId: credentialId.toString('base64'),
        isResidentCredential: true,
        rpId: 'localhost',
        privateKey: keys.pkcs8.toString('base64'),
        userHandle: Buffer.from(approver.userId).toString('base64'),
        signCount: 0,
      },
    });
    const now = new Date().toISOString();
    await account.identity.addPasskey(
      {
        id: credentialId.toString('base64url'),
        userId: approver.userId,
        name: 'test phone',
        publicKey: keys.cose.toString('base64url'),
        counter: 0,
        transports: ['internal'],
        backedUp: false,
        createdAt: now,
        lastUsedAt: null,
      },
      { accountId: account.accountId, at: now, actor: 'test', action: 'passkey.add' },
    );
  });

  afterAll(async () => {
    await browser?.close();
    await ai?.close();
    await account?.close();
    await agent?.dispose();
    await gw?.dispose();
    await mailbox?.stop();
    removeDir(work);
  });

  test('the e-mailed link opens the page, a refused passkey prompt decides nothing, a verified one approves, and the repeated call runs once', async () => {
    const target = join(work, 'deployed');
    const call = { machine: 'web1', command: `touch ${target} # \u202eelif\u001b[0m` };
    const pending = await callTool<{ status: string; approval_id: string }>(ai, 'exec', call);
    expect(pending.data.status).toBe('pending_approval');
    const id = pending.data.approval_id;

    const mail = await mailbox.waitForMail(
      (m) => m.to.includes(approver.email) && m.text.includes(id),
      'request to Petra',
    );
    const link = /(http:\/\/\S+\/approvals\/apr_[0-9a-f]+)/.exec(mail.text)?.[1] ?? '';
    await page.goto(link);
    await page.getByRole('button', { name: 'Approve with passkey' }).waitFor();
    const args = await page.getByTestId('approval-args').textContent();
    expect(args).toContain('<U+202E>');
    expect(args).toContain('␛[0m');
    expect(await page.getByText('(as declared by the client)').count()).toBe(1);
    // Kept outside the run's temp dir so a person can look at the phone layout afterwards.
    await page.screenshot({ path: join(tmpdir(), 'letkite-approval-page.png'), fullPage: true });

    // The person refuses user verification: the browser throws, nothing is decided.
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    await page.getByRole('button', { name: 'Approve with passkey' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByTestId('approval-status').textContent()).toContain('Waiting');
    expect((await callTool(ai, 'approval_wait', { approval_id: id, max_wait_s: 0 })).data).toMatchObject({
      status: 'pending',
    });

    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    await page.getByRole('button', { name: 'Approve with passkey' }).click();
    await page.getByText('Approved (not used yet)').waitFor();

    expect((await callTool(ai, 'approval_wait', { approval_id: id, max_wait_s: 5 })).data).toMatchObject({
      status: 'approved',
    });
    const ran = await callTool<{ exit_code: number }>(ai, 'exec', call);
    expect(ran.ok).toBe(true);
    expect(existsSync(target)).toBe(true);
    const again = await callTool<{ status: string }>(ai, 'exec', call);
    expect(again.data.status).toBe('pending_approval');

    await mailbox.waitForMail((m) => m.to.includes(requester.email) && /approved/.test(m.subject), 'outcome to Rui');
    await page.reload();
    await page.getByText('Approved and run').waitFor();
  });
});
