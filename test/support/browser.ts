import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core';

/** Debian's Chromium with the flags that keep it quiet on a closed network (TESTING.md). */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

/** Viewports for the two shapes every page must work in. */
export const viewports = {
  desktop: { viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
} as const;

/** A fresh browser context (its own cookies), desktop or phone sized. */
export function newContext(browser: Browser, shape: keyof typeof viewports = 'desktop'): Promise<BrowserContext> {
  return browser.newContext({ ...viewports[shape] });
}

/** A CDP virtual WebAuthn authenticator on a page: a platform authenticator with user verification. */
export class VirtualAuthenticator {
  private constructor(
    readonly cdp: CDPSession,
    readonly authenticatorId: string,
  ) {}

  static async attach(page: Page): Promise<VirtualAuthenticator> {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return new VirtualAuthenticator(cdp, authenticatorId);
  }

  /** `false` simulates the person refusing the fingerprint/PIN check (the browser throws NotAllowedError). */
  async setUserVerified(isUserVerified: boolean): Promise<void> {
    await this.cdp.send('WebAuthn.setUserVerified', { authenticatorId: this.authenticatorId, isUserVerified });
  }

  async credentials(): Promise<{ credentialId: string; signCount: number; userHandle?: string }[]> {
    const r = await this.cdp.send('WebAuthn.getCredentials', { authenticatorId: this.authenticatorId });
    return r.credentials;
  }
}

/**
 * Saves a full-page screenshot when LETKITE_SCREENSHOTS names a directory (for looking at the pages); otherwise
 * does nothing, so test runs leave no files behind.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.LETKITE_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.waitForLoadState('networkidle');
  await page
    .locator('.loading')
    .first()
    .waitFor({ state: 'detached', timeout: 5_000 })
    .catch(() => {});
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/** A same-origin JSON call from inside the page (with its cookies and, for changes, its session's CSRF token). */
export async function pageFetch(
  page: Page,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (method !== 'GET') {
        const s = await (await fetch('/api/session')).json();
        if (s.csrf_token) headers['x-csrf-token'] = s.csrf_token;
      }
      const res = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: await res.json().catch(() => ({})) };
    },
    { method, path, body },
  );
}
