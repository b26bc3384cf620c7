import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fakeTokens } from '../apps/gateway/src/output/fake-secrets.fixture';
import { TestAccount } from './support/approvals';
import { callTool, FULL_SHELL_CEILING, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, runCliCommand, tempDir, waitFor } from './support/processes';

/**
 * Masking that cannot be walked around (issue #11): real gateway, real agent, the real MCP client. Every route an
 * AI reads output through is tried with real-format fake secrets hidden the ways an attacker would hide them:
 * split by a window, base64, ANSI colour, URL-encoding, hex dumps, the account's own patterns, LetKite's own
 * token formats; and the audit rows written for those calls must not hold the secrets either.
 */

const tokens = fakeTokens(3);
const GITHUB = tokens['github-token'] as string;
const STRIPE = tokens['stripe-live-key'] as string;
const DB_PASSWORD = 'S3cr3tPassw0rdX9';
const ACCOUNT_SECRET = 'ACME-SECRET-482913';
const ACCOUNT_PATTERN = 'ACME-SECRET-[0-9]{6}';

/** A web session of the owner (`userId`) or of a new member (null), without going through the sign-in pages. */
async function signedIn(account: TestAccount, userId: string | null): Promise<{ cookie: string; csrf: string }> {
  const now = new Date().toISOString();
  let id = userId;
  if (id === null) {
    id = `usr_${randomBytes(9).toString('hex')}`;
    account.store.sqlite
      .prepare('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, ?, ?)')
      .run(id, 'Max', 'max@letkite.test', now);
    account.store.sqlite
      .prepare('INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, ?, ?)')
      .run(account.accountId, id, 'member', now);
  }
  const token = randomBytes(32).toString('base64url');
  const csrf = randomBytes(24).toString('base64url');
  await account.identity.createSession(
    {
      id: `ses_${randomBytes(9).toString('hex')}`,
      userId: id,
      accountId: account.accountId,
      csrfToken: csrf,
      method: 'passkey',
      userAgent: 'test',
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      revokedAt: null,
      tokenHash: createHash('sha256').update(token).digest('hex'),
    },
    { accountId: account.accountId, at: now, actor: 'test', action: 'session.create' },
  );
  return { cookie: `letkite_session=${token}`, csrf };
}

/** Whether `text` shows any 8 consecutive characters of `secret` (a half or a third of a token is a leak). */
function leaks(text: string, secret: string, run = 8): string | null {
  for (let i = 0; i + run <= secret.length; i++) {
    const part = secret.slice(i, i + run);
    if (text.includes(part)) return part;
  }
  return null;
}

function expectNoLeak(text: string, secrets: readonly string[], where: string): void {
  for (const s of secrets) expect(leaks(text, s), `${where} shows part of ${s.slice(0, 6)}…`).toBeNull();
}

/** Removes CSI/OSC escape sequences, as a reader of coloured output would see it. */
const stripAnsi = (text: string) => text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, '');

/** Every hex byte pair of a dump's hex columns, decoded. */
function decodeHexColumns(dump: string, column: RegExp): string {
  let bytes = '';
  for (const line of dump.split('\n')) {
    const m = column.exec(line);
    if (m?.[1]) bytes += m[1].replace(/\s+/g, '');
  }
  return Buffer.from(bytes, 'hex').toString('latin1');
}

interface ReadFileOut {
  content: string;
  encoding: 'utf8' | 'base64';
  offset: number;
  length: number;
  size: number;
  truncated: boolean;
  masked_count: number;
}
interface ExecOut {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  masked_count: number;
}
interface JobPage {
  offset: number;
  next_offset: number;
  data: string;
  eof: boolean;
  masked_count: number;
}

describe('masking through a real gateway and agent', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let client: Client;
  let ownerToken: string;
  let dir: string;

  const exec = async (command: string) => {
    const r = await callTool<ExecOut>(client, 'exec', { machine: 'mask', command });
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    return r.data;
  };
  const read = async (path: string, extra: Record<string, unknown> = {}) => {
    const r = await callTool<ReadFileOut>(client, 'read_file', { machine: 'mask', path, ...extra });
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    return r.data;
  };
  const readText = (r: ReadFileOut) =>
    r.encoding === 'base64' ? Buffer.from(r.content, 'base64').toString('latin1') : r.content;

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('mask', { ceiling: `${FULL_SHELL_CEILING}terminals = true\n` });
    ownerToken = await gw.apiToken('owner');
    // What `npm start` keeps in the data directory (apps/cli/src/commands/start.ts).
    writeFileSync(join(gw.dataDir, 'owner-token'), `${ownerToken}\n`, { mode: 0o600 });
    client = await mcpClient(gw.url, ownerToken);
    dir = tempDir('masking');
  });

  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
    if (dir) removeDir(dir);
  });

  test('read_file windows that cut a secret at any offset show neither half', async () => {
    const head = `${'lorem ipsum dolor sit amet\n'.repeat(40)}export GH=`;
    const text = `${head}${GITHUB}\nnext line\n${'tail text\n'.repeat(20)}`;
    const path = join(dir, 'window.txt');
    writeFileSync(path, text);
    const at = Buffer.byteLength(head);
    for (let cut = at - 3; cut <= at + GITHUB.length + 3; cut++) {
      const before = await read(path, { offset: 0, length: cut });
      const after = await read(path, { offset: cut });
      expect(before.offset).toBe(0);
      expect(before.length).toBe(cut);
      expect(after.offset).toBe(cut);
      expectNoLeak(before.content, [GITHUB], `window [0, ${cut})`);
      expectNoLeak(after.content, [GITHUB], `window [${cut}, end)`);
      if (cut > at && cut < at + GITHUB.length) {
        expect(before.content.endsWith('***'), `window [0, ${cut})`).toBe(true);
        expect(after.content.startsWith('***'), `window [${cut}, end)`).toBe(true);
        expect(before.masked_count + after.masked_count).toBeGreaterThanOrEqual(2);
      }
    }
  });

  test('a window into one long base64 line masks a token whatever alignment its margin starts at', async () => {
    const raw = `${'lorem ipsum dolor\n'.repeat(5000)}GITHUB_TOKEN=${GITHUB}\n${'sit amet\n'.repeat(4000)}`;
    const blob = Buffer.from(raw).toString('base64');
    const path = join(dir, 'one-line.b64');
    writeFileSync(path, blob);
    const at = Math.floor(raw.indexOf(GITHUB) / 3) * 4;
    const encodedToken = blob.slice(at + 4, at + 52);
    for (const offset of [at - 40_001, at - 40_002, at - 40_003, at - 40_004]) {
      const r = await read(path, { offset, length: 50_000 });
      expect(r.masked_count, `window at ${offset}`).toBeGreaterThan(0);
      expectNoLeak(r.content, [encodedToken], `window at ${offset}`);
    }
  });

  test('a window inside a private key block shows no key lines', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const head = 'key follows\n';
    const path = join(dir, 'key.pem');
    writeFileSync(path, `${head}${pem}after\n`);
    const body = pem.split('\n')[5] as string;
    const middle = Buffer.byteLength(head) + pem.indexOf(body);
    const r = await read(path, { offset: middle, length: 200 });
    expectNoLeak(r.content, [body], 'a window inside the key');
  });

  test('base64 reads are masked before encoding: asked for, and the automatic fallback for bytes', async () => {
    const path = join(dir, 'secrets.env');
    writeFileSync(path, `GH=${GITHUB}\nSTRIPE=${STRIPE}\nDATABASE_URL=postgres://app:${DB_PASSWORD}@db/prod\n`);
    const asked = await read(path, { encoding: 'base64' });
    expect(asked.encoding).toBe('base64');
    expectNoLeak(readText(asked), [GITHUB, STRIPE, DB_PASSWORD], 'read_file base64');
    expect(asked.masked_count).toBe(3);
    expect(readText(asked)).toContain('GH=***');

    const binary = join(dir, 'blob.bin');
    writeFileSync(binary, Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x01]), Buffer.from(`tok=${GITHUB}\0`)]));
    const auto = await read(binary);
    expect(auto.encoding).toBe('base64');
    expectNoLeak(readText(auto), [GITHUB], 'read_file of bytes');
    expect(auto.masked_count).toBeGreaterThan(0);

    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const state = join(dir, 'state.json');
    // The agent's state file keeps its key this way (apps/agent/src/join.ts).
    writeFileSync(state, JSON.stringify({ machine_id: 'mch_1', private_key_pem: pem }, null, 2));
    const keyBody = pem.split('\n')[1] as string;
    for (const encoding of ['utf8', 'base64']) {
      expectNoLeak(readText(await read(state, { encoding })), [keyBody], `agent state as ${encoding}`);
    }
  });

  test('grep --color=always cannot split a secret with escape sequences, and the output stays readable', async () => {
    const path = join(dir, 'colour.txt');
    writeFileSync(path, `token ${GITHUB} here\nplain line\n`);
    const middle = GITHUB.slice(10, 16);
    for (const pattern of [middle, 'ghp_', 'token']) {
      const r = await exec(`grep --color=always '${pattern}' ${path}`);
      expect(r.stdout).toContain('\x1b[');
      expectNoLeak(stripAnsi(r.stdout), [GITHUB], `grep --color=always ${pattern}`);
      expectNoLeak(r.stdout, [GITHUB], `grep --color=always ${pattern} (raw)`);
      expect(stripAnsi(r.stdout)).toContain('***');
      expect(stripAnsi(r.stdout)).toContain(' here');
    }
  });

  test('URL-encoded credentials and tokens are decoded and masked', async () => {
    const path = join(dir, 'urls.log');
    const encodedToken = GITHUB.replace('_', '%5F');
    writeFileSync(
      path,
      [
        `GET /cb?next=postgres%3A%2F%2Fapp%3A${DB_PASSWORD}%40db.internal%2Fprod HTTP/1.1`,
        `GET /hook?t=${encodedToken}&x=1`,
        `redirect=https%253A%252F%252Fx.test%252F%253Ftoken%253D${encodeURIComponent(STRIPE)}`,
        `DATABASE_URL=postgres://app:p%40${DB_PASSWORD}@db/prod`,
        '',
      ].join('\n'),
    );
    for (const out of [(await exec(`cat ${path}`)).stdout, (await read(path)).content]) {
      const decoded = decodeURIComponent(decodeURIComponent(out.replace(/%(?![0-9A-Fa-f]{2})/g, '%25')));
      expectNoLeak(decoded, [GITHUB, STRIPE, DB_PASSWORD], 'URL-encoded output');
      expect(out).toContain('GET /cb?next=');
    }
  });

  test('hex dumps (xxd, xxd -p, hexdump -C, od) of a secret are masked', async () => {
    const path = join(dir, 'hex.txt');
    writeFileSync(path, `config: token=${GITHUB}\nkey=${STRIPE}\n`);
    const xxd = (await exec(`xxd ${path}`)).stdout;
    expectNoLeak(xxd, [GITHUB, STRIPE], 'xxd');
    expectNoLeak(decodeHexColumns(xxd, /^[0-9a-f]+: ((?:[0-9a-f]{4} ?){1,8})/), [GITHUB, STRIPE], 'xxd hex columns');
    const plain = (await exec(`xxd -p ${path}`)).stdout;
    expectNoLeak(Buffer.from(plain.replace(/[^0-9a-f]/g, ''), 'hex').toString('latin1'), [GITHUB, STRIPE], 'xxd -p');
    const hexdump = (await exec(`hexdump -C ${path}`)).stdout;
    expectNoLeak(hexdump, [GITHUB, STRIPE], 'hexdump -C');
    expectNoLeak(
      decodeHexColumns(hexdump, /^[0-9a-f]{8} {2}((?:[0-9a-f]{2} {1,2}){1,16})/),
      [GITHUB],
      'hexdump -C hex',
    );
    const od = (await exec(`od -A x -t x1z ${path}`)).stdout;
    expectNoLeak(od, [GITHUB, STRIPE], 'od -t x1z');
    expectNoLeak(decodeHexColumns(od, /^[0-9a-f]+ ((?:[0-9a-f]{2} ?){1,16})/), [GITHUB], 'od hex');
    for (const cmd of ['od -c', 'od', 'od -b', 'od -x']) {
      const r = await exec(`${cmd} ${path}`);
      expect(r.masked_count, cmd).toBeGreaterThan(0);
      expectNoLeak(r.stdout.replace(/ +/g, ''), [GITHUB, STRIPE], cmd);
    }
    const fromFile = await read(path);
    expect(fromFile.content).toContain('token=***');
  });

  test('base64 of a secret in command output is masked where a token would hide', async () => {
    const encoded = Buffer.from(`export GITHUB_TOKEN=${GITHUB}\n`).toString('base64');
    const r = await exec(`printf '%s' '${encoded}' && echo && printf 'ok\\n'`);
    expect(r.stdout).not.toContain(encoded.slice(8, 40));
    expect(r.stdout).toContain('ok');
    expect(r.masked_count).toBeGreaterThan(0);
  });

  test('job_output pages that cut a long line through a secret show neither half', async () => {
    const line = `${'.'.repeat(300)}${GITHUB}${'-'.repeat(300)}`;
    const started = await callTool<{ job_id: string }>(client, 'job_start', {
      machine: 'mask',
      command: `printf '%s' '${line}'`,
    });
    expect(started.ok, JSON.stringify(started.error)).toBe(true);
    const job = started.data.job_id;
    await waitFor('job done', async () => {
      const s = await callTool<{ state: string }>(client, 'job_status', { machine: 'mask', job_id: job });
      return s.data.state === 'exited';
    });
    for (let cut = 297; cut <= 300 + GITHUB.length + 3; cut += 2) {
      const first = await callTool<JobPage>(client, 'job_output', { machine: 'mask', job_id: job, size: cut });
      const second = await callTool<JobPage>(client, 'job_output', { machine: 'mask', job_id: job, offset: cut });
      expect(first.data.next_offset).toBe(cut);
      expect(second.data.offset).toBe(cut);
      expectNoLeak(first.data.data, [GITHUB], `job page [0, ${cut})`);
      expectNoLeak(second.data.data, [GITHUB], `job page [${cut}, end)`);
    }
  });

  test("the account's redaction patterns mask every output route", async () => {
    const set = await runCliCommand(['admin', 'redaction', 'set', ACCOUNT_PATTERN], gw.cliEnv);
    expect(set.code, set.stderr).toBe(0);
    const listed = await runCliCommand(['admin', 'redaction', 'list'], gw.cliEnv);
    expect(listed.stdout).toContain(ACCOUNT_PATTERN);
    const path = join(dir, 'acme.txt');
    writeFileSync(path, `the code is ${ACCOUNT_SECRET}\n`);

    const viaExec = await exec(`cat ${path}`);
    expect(viaExec.stdout).toBe('the code is ***\n');
    expect(viaExec.masked_count).toBe(1);
    const viaRead = await read(path);
    expect(viaRead.content).toBe('the code is ***\n');
    const viaShell = await callTool<ExecOut>(client, 'shell_run', { machine: 'mask', command: `cat ${path}` });
    expect(viaShell.data.stdout).toBe('the code is ***\n');
    const many = await callTool<{ results: { result?: ExecOut }[] }>(client, 'exec_many', {
      machines: ['mask'],
      command: `cat ${path}`,
    });
    expect(many.data.results[0]?.result?.stdout).toBe('the code is ***\n');
    const job = await callTool<{ job_id: string }>(client, 'job_start', { machine: 'mask', command: `cat ${path}` });
    await waitFor('job done', async () => {
      const s = await callTool<{ state: string }>(client, 'job_status', { machine: 'mask', job_id: job.data.job_id });
      return s.data.state === 'exited';
    });
    const page = await callTool<JobPage>(client, 'job_output', { machine: 'mask', job_id: job.data.job_id });
    expect(page.data.data).toBe('the code is ***\n');
    const diff = await exec(`grep -c ACME ${path}`);
    expect(diff.stdout.trim()).toBe('1');
  });

  test('terminal_read and terminal_wait mask LetKite tokens and account patterns', async () => {
    const path = join(dir, 'term.txt');
    writeFileSync(path, `owner ${ownerToken}\ncode ${ACCOUNT_SECRET}\n`);
    const opened = await callTool<{ terminal_id: string }>(client, 'terminal_open', {
      machine: 'mask',
      cols: 60,
      rows: 20,
    });
    expect(opened.ok, JSON.stringify(opened.error)).toBe(true);
    const term = opened.data.terminal_id;
    try {
      await callTool(client, 'terminal_send', {
        machine: 'mask',
        terminal_id: term,
        text: `cat ${path}; echo DONE`,
        submit: true,
      });
      const waited = await callTool<{ matched: boolean; context: string }>(client, 'terminal_wait', {
        machine: 'mask',
        terminal_id: term,
        pattern: '\\nDONE',
        regex: true,
        timeout_s: 10,
      });
      expect(waited.data.matched).toBe(true);
      for (const mode of ['visible', 'recent']) {
        const screen = await callTool<{ text: string; masked_count: number }>(client, 'terminal_read', {
          machine: 'mask',
          terminal_id: term,
          mode,
        });
        expectNoLeak(screen.data.text.replace(/\n/g, ''), [ownerToken, ACCOUNT_SECRET], `terminal_read ${mode}`);
        expect(screen.data.masked_count).toBeGreaterThanOrEqual(2);
      }
    } finally {
      await callTool(client, 'terminal_close', { machine: 'mask', terminal_id: term });
    }
  });

  test('admins set the patterns over REST; members cannot; a bad pattern is refused without being quoted', async () => {
    const account = await TestAccount.open(gw);
    try {
      const owner = await signedIn(account, account.ownerId);
      const member = await signedIn(account, null);
      const call = (who: { cookie: string; csrf: string }, method: string, body?: unknown) =>
        fetch(`${gw.url}/api/redaction-patterns`, {
          method,
          headers: { cookie: who.cookie, 'x-csrf-token': who.csrf, origin: gw.url, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      expect((await call(member, 'PUT', { patterns: ['ZEBRA-[0-9]{4}'] })).status).toBe(403);
      expect((await call(member, 'GET')).status).toBe(403);
      const bad = await call(owner, 'PUT', { patterns: ['ok-[0-9]+', '(SECRETWORD+)+'] });
      expect(bad.status).toBe(400);
      const badText = await bad.text();
      expect(badText).toContain('invalid_params');
      expect(badText).not.toContain('SECRETWORD');
      const saved = await call(owner, 'PUT', { patterns: ['ZEBRA-[0-9]{4}', ACCOUNT_PATTERN] });
      expect(saved.status).toBe(200);
      expect(await (await call(owner, 'GET')).json()).toEqual({ patterns: ['ZEBRA-[0-9]{4}', ACCOUNT_PATTERN] });
      expect((await exec('echo ZEBRA-1234 and ZEBRA-12')).stdout).toBe('*** and ZEBRA-12\n');
      const audit = account.store.sqlite
        .prepare("SELECT details FROM audit_events WHERE action = 'redaction.set' ORDER BY id DESC LIMIT 1")
        .get() as { details: string };
      expect(JSON.parse(audit.details)).toEqual({ count: 2 });
    } finally {
      await account.close();
    }
  });

  test("terminal_read's visible screen masks a token wrapped across its top edge", async () => {
    const opened = await callTool<{ terminal_id: string }>(client, 'terminal_open', {
      machine: 'mask',
      cols: 60,
      rows: 20,
    });
    expect(opened.ok, JSON.stringify(opened.error)).toBe(true);
    const term = opened.data.terminal_id;
    try {
      // 49 x's, a space and the 40-character token wrap after 10 characters of the token; 18 more lines and the
      // prompt scroll the screen until its first row is the token's other 30 characters.
      const line = `${'x'.repeat(49)} ${GITHUB}`;
      await callTool(client, 'terminal_send', {
        machine: 'mask',
        terminal_id: term,
        text: `clear; printf '%s\\n' '${line}'; seq 101 118`,
        submit: true,
      });
      const waited = await callTool<{ matched: boolean }>(client, 'terminal_wait', {
        machine: 'mask',
        terminal_id: term,
        pattern: '\\n118\\n',
        regex: true,
        timeout_s: 10,
      });
      expect(waited.data.matched).toBe(true);
      const screen = await waitFor('the token tail on the first row', async () => {
        const r = await callTool<{ text: string; masked_count: number }>(client, 'terminal_read', {
          machine: 'mask',
          terminal_id: term,
          mode: 'visible',
        });
        return r.data.text.split('\n')[1]?.startsWith('101') ? r.data : undefined;
      });
      expectNoLeak(screen.text, [GITHUB], 'the visible screen');
      expect(screen.text.split('\n')[0]).toBe('***');
      expect(screen.masked_count).toBe(1);
    } finally {
      await callTool(client, 'terminal_close', { machine: 'mask', terminal_id: term });
    }
  });

  test("the owner's lk_ token and other LetKite secrets are masked in command output", async () => {
    const owner = await exec(`cat ${join(gw.dataDir, 'owner-token')} 2>&1; true`);
    expectNoLeak(owner.stdout + owner.stderr, [ownerToken], 'cat owner-token');
    const copy = join(dir, 'bashrc');
    const join_ = `lkj_${'Zx9_Yw8-Vu7'.repeat(4)}abcdefghijk`.slice(0, 47);
    const session = `lks_${'Qa1Ws2Ed3Rf4'.repeat(4)}`.slice(0, 47);
    const setup = `http://localhost:8787/setup#lksetup_${'Mn8Bv7Cx6Za5'.repeat(4).slice(0, 43)}`;
    writeFileSync(
      copy,
      `export LETKITE_TOKEN=${ownerToken}\nletkite agent join http://gw ${join_}\nCookie: letkite_session=${session}\n${setup}\n`,
    );
    const r = await exec(`cat ${copy}`);
    expectNoLeak(r.stdout, [ownerToken, join_, session, setup.slice(-43)], 'LetKite tokens');
    expect(r.masked_count).toBe(4);
  });

  test('audit rows of these calls hold no secret', async () => {
    await exec(`printf '%s\\n' ${GITHUB} ${ACCOUNT_SECRET} ${ownerToken} >/dev/null`);
    await callTool(client, 'exec_many', { machines: ['mask'], command: `echo ${STRIPE}` });
    await callTool(client, 'shell_run', { machine: 'mask', command: `echo password=${DB_PASSWORD}` });
    const db = new Database(join(gw.dataDir, 'letkite.db'), { readonly: true });
    try {
      const rows = db.prepare('SELECT action, target, details FROM audit_events').all() as {
        action: string;
        target: string | null;
        details: string;
      }[];
      expect(rows.some((r) => r.action === 'tool.exec')).toBe(true);
      const all = rows.map((r) => `${r.action} ${r.target ?? ''} ${r.details}`).join('\n');
      expectNoLeak(all, [GITHUB, STRIPE, DB_PASSWORD, ACCOUNT_SECRET, ownerToken], 'audit_events');
      expect(all).toContain('***');
    } finally {
      db.close();
    }
  });
});
