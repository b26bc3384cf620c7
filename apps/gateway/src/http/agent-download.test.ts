import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toLetKiteError } from '@letkite/protocol';
import { Hono } from 'hono';
import { afterEach, expect, test } from 'vitest';
import { agentDownloadRoutes as routes, SHA256_HEADER } from './agent-download';
import { httpStatusOf } from './error-status';
import { installCommand, renderInstallScript } from './install-script';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function distWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'letkite-agent-dist-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** The routes with the gateway's error mapping (app.ts), as they answer there. */
function agentDownloadRoutes(deps: Parameters<typeof routes>[0]): Hono {
  const app = new Hono();
  app.onError((err, c) => {
    const e = toLetKiteError(err);
    return c.json({ error: e.toPayload() }, httpStatusOf[e.code]);
  });
  app.route('/', routes(deps));
  return app;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

test('the download answers the bytes with their SHA-256; an unknown platform is not_found, a malformed one invalid', async () => {
  const app = agentDownloadRoutes({
    publicUrl: 'https://gw.example.com',
    agentDist: distWith({ 'letkite-agent-linux-x64.tar.gz': 'tarball bytes' }),
  });
  const ok = await app.request('/agent/download/linux-x64');
  expect(ok.status).toBe(200);
  expect(ok.headers.get(SHA256_HEADER)).toBe(sha('tarball bytes'));
  expect(await ok.text()).toBe('tarball bytes');
  const missing = await app.request('/agent/download/linux-arm64');
  expect(missing.status).toBe(404);
  const bad = await app.request('/agent/download/..%2Fsecret');
  expect(bad.status).toBe(400);
});

test('install.sh carries the gateway URL and each build checksum, and is valid POSIX sh', async () => {
  const app = agentDownloadRoutes({
    publicUrl: 'https://gw.example.com/',
    agentDist: distWith({
      'letkite-agent-linux-x64.tar.gz': 'a',
      'letkite-agent-linux-arm64.tar.gz': 'b',
      'notes.txt': 'not an agent',
    }),
  });
  const script = await (await app.request('/agent/install.sh')).text();
  expect(script).toMatch(/^#!\/bin\/sh\n/);
  expect(script).toContain("GATEWAY_URL='https://gw.example.com'\n");
  expect(script).toContain(`linux-x64) echo ${sha('a')} ;;`);
  expect(script).toContain(`linux-arm64) echo ${sha('b')} ;;`);
  expect(script).not.toContain('notes');
  for (const shell of ['sh', 'dash', 'bash']) {
    const r = spawnSync(shell, ['-n'], { input: script, encoding: 'utf8' });
    if (r.error) continue; // that shell is not installed here
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  }
});

test('a quote in the URL cannot end the string; a bogus checksum or platform is left out', () => {
  const script = renderInstallScript("https://gw.example.com/x'$(id)", [
    { platform: 'linux-x64', sha256: 'not-hex' },
    { platform: 'linux x64; rm', sha256: 'a'.repeat(64) },
  ]);
  expect(script).toContain(`GATEWAY_URL='https://gw.example.com/x'\\''$(id)'`);
  expect(script).not.toMatch(/^\s+linux/m);
});

test('the one command puts the token after sh -s --, never in the URL', () => {
  expect(installCommand('https://gw.example.com/', 'lkj_abc')).toBe(
    'curl -fsSL https://gw.example.com/agent/install.sh | sudo sh -s -- lkj_abc',
  );
});
