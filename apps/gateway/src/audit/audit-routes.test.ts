import { randomBytes } from 'node:crypto';
import { toLetKiteError } from '@letkite/protocol';
import { AuditEventView, AuditListResponse, AuditSettings, AuditVerifyResponse } from '@letkite/protocol/api';
import { Hono } from 'hono';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { httpStatusOf } from '../http/error-status';
import { sessionCookieName } from '../identity/current-user';
import { newWebSession } from '../identity/session-cookie';
import { TotpSeedCipher } from '../identity/totp-seed-cipher';
import { SqliteIdentityStore } from '../store/sqlite/sqlite-identity-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { AuditEventInput } from '../store/types';
import { auditRoutes } from './audit-routes';

const ORIGIN = 'http://localhost:8787';
let store: SqliteStore;
let identity: SqliteIdentityStore;
let app: Hono;
let accountId: string;
let ownerId: string;
let clock: Date;

beforeEach(async () => {
  clock = new Date('2026-11-30T10:00:00Z');
  store = new SqliteStore(':memory:');
  const b = await store.bootstrap(clock.toISOString());
  accountId = b.account.id;
  ownerId = b.owner.id;
  identity = new SqliteIdentityStore(store, new TotpSeedCipher(randomBytes(32)));
  app = new Hono();
  app.onError((err, c) => {
    const e = toLetKiteError(err);
    return c.json({ error: e.toPayload() }, httpStatusOf[e.code]);
  });
  app.route(
    '/api',
    auditRoutes({ store, identity, now: () => clock, publicUrl: ORIGIN, log: () => {}, auditPollMs: 20 }),
  );
});
afterEach(async () => store.close());

/** A signed-in session for a user (made directly in the store, as a sign-in would). */
async function sessionOf(userId: string): Promise<{ cookie: string; csrf: string }> {
  const { session, token } = newWebSession({ userId, accountId, method: 'password_totp', userAgent: null, now: clock });
  await identity.createSession(session, {
    accountId,
    at: clock.toISOString(),
    actor: `user:${userId}`,
    action: 'session.create',
  });
  return { cookie: `${sessionCookieName(ORIGIN)}=${token}`, csrf: session.csrfToken };
}

function addMember(id: string): void {
  store.sqlite
    .prepare('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, NULL, ?)')
    .run(id, id, clock.toISOString());
  store.sqlite
    .prepare('INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, ?, ?)')
    .run(accountId, id, 'member', clock.toISOString());
}

async function get(path: string, who: { cookie: string }) {
  const res = await app.request(path, { headers: { cookie: who.cookie, origin: ORIGIN } });
  return res;
}

function call(i: number, extra: Partial<AuditEventInput> = {}): AuditEventInput {
  return {
    accountId,
    at: new Date(Date.UTC(2026, 10, 30, 11, i)).toISOString(),
    actor: 'connection:con_a',
    action: 'tool.exec',
    tool: 'exec',
    machineId: 'mch_1',
    userId: ownerId,
    decision: 'allow',
    outcome: 'ok',
    details: { arguments: { command: `echo ${i}, "quoted"\nnext` } },
    ...extra,
  };
}

test('the list filters by tool, machine, connection, person, outcome, action and time, newest first', async () => {
  const owner = await sessionOf(ownerId);
  await store.appendAudit(call(1));
  await store.appendAudit(
    call(2, { action: 'tool.write_file', tool: 'write_file', machineId: 'mch_2', outcome: 'blocked_by_policy' }),
  );
  await store.appendAudit(call(3, { actor: 'token:tok_b', credentialId: 'tok_b' }));
  const ids = async (q: string) => {
    const res = await get(`/api/audit?${q}`, owner);
    expect(res.status).toBe(200);
    return AuditListResponse.parse(await res.json()).events.map((e) => e.id);
  };
  const all = await ids('');
  expect(all.length).toBeGreaterThanOrEqual(5);
  expect([...all].sort((a, b) => b - a)).toEqual(all);
  const [newest] = all;
  expect(await ids('tool=write_file')).toEqual([newest! - 1]);
  expect(await ids('machine=mch_1&action=tool')).toEqual([newest!, newest! - 2]);
  expect(await ids('connection=tok_b')).toEqual([newest!]);
  expect(await ids('outcome=error')).toEqual([newest! - 1]);
  expect(await ids(`person=${ownerId}&action=tool`)).toHaveLength(3);
  expect(await ids('action=session.create')).toHaveLength(1);
  expect(await ids('since=2026-11-30T11:02:00Z&until=2026-11-30T11:03:00Z')).toEqual([newest! - 1]);
  const bad = await get('/api/audit?since=yesterday', owner);
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_params');
});

test('the cursor pages through every row once, in a stable order while new rows arrive', async () => {
  const owner = await sessionOf(ownerId);
  for (let i = 0; i < 7; i++) await store.appendAudit(call(i));
  const seen: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q: string = cursor === null ? 'limit=3&action=tool' : `limit=3&action=tool&cursor=${cursor}`;
    const body = AuditListResponse.parse(await (await get(`/api/audit?${q}`, owner)).json());
    seen.push(...body.events.map((e) => e.id));
    cursor = body.next_cursor;
    // A row written meanwhile is newer than every page: it never shifts the pages still to come.
    await store.appendAudit(call(20 + pages));
    pages++;
  } while (cursor !== null);
  expect(pages).toBe(3);
  expect(seen).toHaveLength(7);
  expect(new Set(seen).size).toBe(7);
  const forged = await get('/api/audit?cursor=not-a-cursor', owner);
  expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('invalid_params');
});

test('export streams JSON lines and CSV that read back to the same rows, and is itself logged', async () => {
  const owner = await sessionOf(ownerId);
  for (let i = 0; i < 3; i++) await store.appendAudit(call(i));
  const jsonl = await get('/api/audit/export?format=jsonl&action=tool', owner);
  expect(jsonl.headers.get('content-type')).toContain('application/x-ndjson');
  expect(jsonl.headers.get('content-disposition')).toMatch(/attachment; filename="letkite-activity-.*\.jsonl"/);
  const lines = (await jsonl.text())
    .trim()
    .split('\n')
    .map((l) => AuditEventView.parse(JSON.parse(l)));
  expect(lines.map((l) => l.details)).toEqual(
    [0, 1, 2].map((i) => ({ arguments: { command: `echo ${i}, "quoted"\nnext` } })),
  );
  expect(lines[0]!.id).toBeLessThan(lines[2]!.id);

  const csv = await get('/api/audit/export?format=csv&action=tool', owner);
  expect(csv.headers.get('content-type')).toContain('text/csv');
  const text = await csv.text();
  const rows = parseCsv(text);
  expect(rows[0]).toContain('details');
  const detailsAt = rows[0]!.indexOf('details');
  expect(rows.slice(1).map((r) => JSON.parse(r[detailsAt]!))).toEqual(lines.map((l) => l.details));
  expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(lines.map((l) => l.id));

  const logged = AuditListResponse.parse(await (await get('/api/audit?action=audit.export', owner)).json());
  expect(logged.events).toHaveLength(2);
});

test('audit.read is needed: a member without it is refused, a custom role with it may read', async () => {
  addMember('usr_m');
  const member = await sessionOf('usr_m');
  for (const path of ['/api/audit', '/api/audit/export?format=csv', '/api/audit/stream', '/api/audit/verify']) {
    const res = await get(path, member);
    expect(res.status, path).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
  }
  const anonymous = await app.request('/api/audit');
  expect(anonymous.status).toBe(401);
  await identity.saveCustomRole(
    { id: 'rol_auditor', accountId, name: 'auditor', permissions: ['audit.read'], createdAt: clock.toISOString() },
    { accountId, at: clock.toISOString(), actor: `user:${ownerId}`, action: 'role.create' },
  );
  await identity.setMemberRole(accountId, 'usr_m', 'member', 'rol_auditor', {
    accountId,
    at: clock.toISOString(),
    actor: `user:${ownerId}`,
    action: 'member.role',
  });
  expect((await get('/api/audit', member)).status).toBe(200);
  // Reading is not managing: the retention stays with owners and admins.
  const put = await app.request('/api/audit/settings', {
    method: 'PUT',
    headers: { cookie: member.cookie, origin: ORIGIN, 'x-csrf-token': member.csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ retention_days: 1 }),
  });
  expect(put.status).toBe(403);
});

test('verify answers whole, then names the row an edit broke', async () => {
  const owner = await sessionOf(ownerId);
  await store.appendAudit(call(1));
  const id = await store.appendAudit(call(2));
  await store.appendAudit(call(3));
  expect(AuditVerifyResponse.parse(await (await get('/api/audit/verify', owner)).json())).toMatchObject({ ok: true });
  store.sqlite.prepare("UPDATE audit_events SET outcome = 'ok', decision = 'deny' WHERE id = ?").run(id);
  expect(AuditVerifyResponse.parse(await (await get('/api/audit/verify', owner)).json())).toMatchObject({
    ok: false,
    broken_id: id,
    reason: 'row_changed',
  });
});

test('setting a retention prunes at once and the chain still verifies', async () => {
  await store.appendAudit(call(1, { at: '2026-10-01T00:00:00.000Z' }));
  await store.appendAudit(call(2, { at: '2026-12-20T00:00:00.000Z' }));
  clock = new Date('2026-12-31T00:00:00Z');
  const owner = await sessionOf(ownerId);
  const put = await app.request('/api/audit/settings', {
    method: 'PUT',
    headers: { cookie: owner.cookie, origin: ORIGIN, 'x-csrf-token': owner.csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ retention_days: 30 }),
  });
  expect(AuditSettings.parse(await put.json())).toEqual({ retention_days: 30 });
  const events = AuditListResponse.parse(await (await get('/api/audit', owner)).json()).events;
  // The bootstrap and the October call go; the December call, the sign-in and the setting's own row stay.
  expect(events.map((e) => e.action)).toEqual(['audit.prune', 'audit.retention', 'session.create', 'tool.exec']);
  expect(events[0]?.details).toMatchObject({ pruned: 2 });
  expect(AuditVerifyResponse.parse(await (await get('/api/audit/verify', owner)).json())).toMatchObject({
    ok: true,
    rows: 4,
  });
});

test('the live tail sends rows written after it opened, filtered, as server-sent events', async () => {
  const owner = await sessionOf(ownerId);
  await store.appendAudit(call(0));
  const controller = new AbortController();
  const res = await app.request('/api/audit/stream?tool=exec', {
    headers: { cookie: owner.cookie, origin: ORIGIN },
    signal: controller.signal,
  });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const until = async (pred: () => boolean) => {
    while (!pred()) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
  };
  await until(() => text.includes('event: ready'));
  await store.appendAudit(call(5, { action: 'tool.read_file', tool: 'read_file' }));
  const id = await store.appendAudit(call(6));
  await until(() => text.includes(`id: ${id}`));
  controller.abort();
  await reader.cancel();
  const events = text
    .split('\n\n')
    .filter((b) => b.includes('event: audit'))
    .map((b) =>
      AuditEventView.parse(
        JSON.parse(
          b
            .split('\n')
            .find((l) => l.startsWith('data: '))!
            .slice(6),
        ),
      ),
    );
  expect(events.map((e) => [e.id, e.tool])).toEqual([[id, 'exec']]);
});

/** RFC 4180 CSV, as a spreadsheet reads it. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  return rows;
}
