import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { pgMigrationsCheck, shippedPgMigrations } from '../../http/health';
import { openStore } from '../open-store';
import type { AuditQuery } from '../types';
import { auditListQuery } from './pg-audit-log';
import { PG_DOMAINS } from './pg-database';
import { PgStore } from './pg-store';
import { createTestDatabase } from './test-database';

/** PostgreSQL-only behaviour of the core store: opening by URL, readiness of migrations, and the audit indexes. */

let db: { url: string; drop(): Promise<void> };
let store: PgStore;

beforeAll(async () => {
  db = await createTestDatabase();
  const opened = await openStore(db.url);
  if (!(opened instanceof PgStore)) throw new Error('openStore did not open PostgreSQL for a postgres:// URL');
  store = opened;
}, 60_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

test('a URL whose database cannot be opened fails without its password in the message', async () => {
  const url = new URL(db.url);
  url.password = 's3cret-pass';
  url.pathname = '/letkite_test_does_not_exist';
  const err = (await openStore(url.toString()).catch((e: unknown) => e)) as Error & { code?: string };
  expect(err).toBeInstanceOf(Error);
  expect(err.message).toContain('letkite_test_does_not_exist');
  expect(err.message).not.toContain('s3cret-pass');
  expect(err.message).toContain('***');
  expect(JSON.stringify({ ...err, stack: err.stack })).not.toContain('s3cret-pass');
});

test('postgresql:// opens the same store as postgres://', async () => {
  const other = await openStore(db.url.replace(/^postgres:/, 'postgresql:'));
  try {
    expect(other).toBeInstanceOf(PgStore);
    const a = await store.bootstrap(new Date().toISOString());
    expect((await other.bootstrap(new Date().toISOString())).account.id).toBe(a.account.id);
  } finally {
    await other.close();
  }
});

test('every PostgreSQL migration folder is applied on open, and readiness fails when one is not recorded', async () => {
  const shipped = shippedPgMigrations();
  // Every folder the build ships is one the opener applies (a domain missing from PG_DOMAINS never migrates).
  expect(new Set(shipped.map((m) => m.domain))).toEqual(new Set(PG_DOMAINS.map((d) => d.folder)));
  const check = pgMigrationsCheck(store.database.pool);
  await expect(Promise.resolve(check.check())).resolves.toBeUndefined();
  // As if the database were restored from a dump older than the code: the core's newest migration unrecorded.
  const [row] = (
    await store.database.pool.query<{ id: number; created_at: string }>(
      'SELECT id, created_at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1',
    )
  ).rows;
  await store.database.pool.query('DELETE FROM "__drizzle_migrations" WHERE id = $1', [row?.id]);
  try {
    await expect(Promise.resolve(check.check())).rejects.toThrow(/migrations not applied/);
  } finally {
    await store.database.pool.query('INSERT INTO "__drizzle_migrations" (id, hash, created_at) VALUES ($1, $2, $3)', [
      row?.id,
      'restored',
      row?.created_at,
    ]);
  }
  await expect(Promise.resolve(check.check())).resolves.toBeUndefined();
});

test("the activity log's filters use the (account, column, id) indexes", async () => {
  const { account } = await store.bootstrap(new Date().toISOString());
  // A few thousand rows over a few accounts, machines, tools and people, written in one statement (the chain is
  // not what this looks at). Each filter matches under 1% of the rows, as the activity log's filters do in a
  // grown log; a filter matching a large share is served as well by walking the primary key backwards.
  await store.database.pool.query(
    `INSERT INTO audit_events (id, account_id, at, actor, action, tool, machine_id, user_id, credential_id, outcome,
       details, prev_hash, hash)
     SELECT nextval('audit_events_id_seq'), CASE WHEN g % 4 = 0 THEN $1 ELSE 'acc_' || (g % 4) END,
       to_char(timestamp '2026-01-01' + g * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.000"Z"'),
       'connection:con_' || (g % 70), 'tool.' || (g % 40), (g % 40)::text, 'mch_' || (g % 50), 'usr_' || (g % 60),
       'con_' || (g % 70), CASE WHEN g % 97 = 0 THEN 'blocked_by_policy' ELSE 'ok' END, '{}', md5(g::text), md5(g::text)
     FROM generate_series(1, 6000) AS g`,
    [account.id],
  );
  await store.database.pool.query('ANALYZE audit_events');
  const plans: Record<string, string> = {};
  const explain = async (name: string, query: AuditQuery) => {
    const { sql, params } = auditListQuery(store.database.db, account.id, query).toSQL();
    const plan = await store.database.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
    plans[name] = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
  };
  await explain('machine', { limit: 50, machineId: 'mch_3' });
  await explain('tool', { limit: 50, tool: '4' });
  await explain('user', { limit: 50, userId: 'usr_2' });
  await explain('credential', { limit: 50, credentialId: 'con_3' });
  await explain('outcome', { limit: 50, outcome: 'blocked_by_policy' });
  await explain('action', { limit: 50, action: 'tool.4' });
  await explain('time', { limit: 50, since: '2026-01-02T00:00:00.000Z', until: '2026-01-02T06:00:00.000Z' });
  expect(plans.machine).toMatch(/audit_account_machine/);
  expect(plans.tool).toMatch(/audit_account_tool/);
  expect(plans.user).toMatch(/audit_account_user/);
  expect(plans.credential).toMatch(/audit_account_credential/);
  expect(plans.outcome).toMatch(/audit_account_outcome/);
  expect(plans.action).toMatch(/audit_account_action/);
  expect(plans.time).toMatch(/audit_account_at|audit_events_pkey/);
  for (const plan of Object.values(plans)) expect(plan).not.toMatch(/Seq Scan/);
}, 60_000);

test('on a database with a linguistic collation, machines still list and tool calls still filter as on SQLite', async () => {
  // The server here defaults to C; an operator's database often is en_US. Create one with ICU en-US.
  const admin = new URL(db.url);
  const name = `letkite_test_icu_${Math.random().toString(16).slice(2, 10)}`;
  admin.pathname = '/postgres';
  const run = async (statement: string) => {
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  await run(`CREATE DATABASE "${name}" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`);
  const url = new URL(db.url);
  url.pathname = `/${name}`;
  const icu = await PgStore.open(url.toString());
  try {
    const at = new Date().toISOString();
    const { account, owner } = await icu.bootstrap(at);
    const audit = { accountId: account.id, at, actor: `user:${owner.id}`, action: 'machine.enroll' };
    for (const [i, machineName] of ['b', 'A', 'c', 'B2'].entries()) {
      const jt = `jt_${i}`;
      await icu.createJoinToken(
        {
          id: jt,
          accountId: account.id,
          createdBy: owner.id,
          createdAt: at,
          expiresAt: at,
          usedAt: null,
          machineId: null,
          tokenHash: `h${i}`,
        },
        audit,
      );
      const machine = {
        id: `mch_${i}`,
        accountId: account.id,
        name: machineName,
        publicKey: `pk${i}`,
        hostname: null,
        os: null,
        osRelease: null,
        arch: null,
        agentVersion: null,
        labels: [],
        ceiling: null,
        ceilingSource: null,
        ceilingError: null,
        enrolledAt: at,
        lastSeenAt: null,
      };
      expect((await icu.enrollMachine(jt, machine, audit, 'refuse')).ok).toBe(true);
    }
    // Bytes: upper case first, as SQLite orders them (en-US would give A, b, B2, c).
    expect((await icu.listMachines(account.id)).map((m) => m.name)).toEqual(['A', 'B2', 'b', 'c']);
    for (const action of ['tool.exec', 'tool-x', 'toolbox', 'tool/x', 'takeover.notice'])
      await icu.appendAudit({ accountId: account.id, at, actor: 'system', action });
    const calls = await icu.listAudit(account.id, { limit: 50, toolCalls: true });
    expect(calls.map((r) => r.action)).toEqual(['tool.exec']);
  } finally {
    await icu.close();
    await run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}, 60_000);
