import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { SqliteStore } from './sqlite-store';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function fresh(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lk-store-'));
  dirs.push(dir);
  return join(dir, 'letkite.db');
}

const here = import.meta.dirname;

/** A separate process that waits for `at` (epoch ms), then opens the store (all domains) and bootstraps. */
function openerAt(file: string, at: number): Promise<{ code: number | null; out: string }> {
  const script = `
    const { SqliteStore } = await import(${JSON.stringify(resolve(here, 'sqlite-store.ts'))});
    const { SqliteIdentityStore } = await import(${JSON.stringify(resolve(here, 'sqlite-identity-store.ts'))});
    const { SqliteOAuthStore } = await import(${JSON.stringify(resolve(here, 'sqlite-oauth-store.ts'))});
    const { SqliteApprovalStore } = await import(${JSON.stringify(resolve(here, 'sqlite-approval-store.ts'))});
    while (Date.now() < ${at}) {}
    const s = new SqliteStore(${JSON.stringify(file)});
    new SqliteIdentityStore(s); new SqliteOAuthStore(s); new SqliteApprovalStore(s);
    const b = await s.bootstrap(new Date().toISOString());
    console.log(b.account.id);
    await s.close();
  `;
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('exit', (code) => done({ code, out }));
  });
}

test('processes opening one fresh database at the same moment all migrate it and agree on one account', async () => {
  for (let round = 0; round < 3; round++) {
    const file = fresh();
    const at = Date.now() + 4_000;
    const results = await Promise.all([0, 1, 2].map(() => openerAt(file, at)));
    for (const r of results) expect(r.code, r.out).toBe(0);
    expect(new Set(results.map((r) => r.out.trim())).size).toBe(1);
  }
}, 90_000);

test('a database from before the bootstrap row keeps its first account as the bootstrapped one', async () => {
  const file = fresh();
  const first = new SqliteStore(file);
  const { account } = await first.bootstrap(new Date().toISOString());
  // As the database was before the migration: no bootstrap table, the migration not recorded.
  first.sqlite.exec('DROP TABLE gateway_bootstrap');
  const last = first.sqlite.prepare('SELECT max(created_at) AS m FROM __drizzle_migrations').get() as { m: number };
  first.sqlite.prepare('DELETE FROM __drizzle_migrations WHERE created_at = ?').run(last.m);
  await first.close();
  const reopened = new SqliteStore(file);
  try {
    expect((await reopened.bootstrap(new Date().toISOString())).account.id).toBe(account.id);
    const n = reopened.sqlite.prepare('SELECT count(*) AS n FROM accounts').get() as { n: number };
    expect(n.n).toBe(1);
  } finally {
    await reopened.close();
  }
});
