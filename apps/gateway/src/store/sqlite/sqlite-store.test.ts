import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { readMigrationFiles } from 'drizzle-orm/migrator';
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

// Races of first starts on one file run on both dialects in store/contract/core-store.contract.test.ts.

/** A database as the first release left it: only the first core migration applied, rows written by hand. */
function firstReleaseDatabase(file: string, fill: (db: Database.Database) => void): void {
  const [first] = readMigrationFiles({ migrationsFolder: resolve(here, '../../../drizzle/sqlite') });
  if (!first) throw new Error('no core migrations');
  const db = new Database(file);
  try {
    db.exec('CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)');
    for (const stmt of first.sql) if (stmt.trim() !== '') db.exec(stmt);
    db.prepare('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)').run(
      first.hash,
      first.folderMillis,
    );
    fill(db);
  } finally {
    db.close();
  }
}

test('a database from before the bootstrap row keeps its first account as the bootstrapped one', async () => {
  const file = fresh();
  const at = '2026-01-01T00:00:00.000Z';
  firstReleaseDatabase(file, (db) => {
    db.prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)').run('acc_old', 'default', at);
    db.prepare('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, NULL, ?)').run('usr_old', 'owner', at);
    db.prepare('INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, ?, ?)').run(
      'acc_old',
      'usr_old',
      'owner',
      at,
    );
  });
  const reopened = new SqliteStore(file);
  try {
    expect((await reopened.bootstrap(new Date().toISOString())).account.id).toBe('acc_old');
    const n = reopened.sqlite.prepare('SELECT count(*) AS n FROM accounts').get() as { n: number };
    expect(n.n).toBe(1);
  } finally {
    await reopened.close();
  }
});

test('audit rows from before the hash chain get their typed columns and are chained when the store opens', async () => {
  const file = fresh();
  firstReleaseDatabase(file, (db) => {
    const row = db.prepare(
      'INSERT INTO audit_events (account_id, at, actor, action, target, outcome, details) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    row.run('acc_old', '2026-01-01T00:00:00.000Z', 'user:usr_old', 'member.remove', 'usr_x', 'ok', '{}');
    row.run('acc_old', '2026-01-01T00:01:00.000Z', 'connection:con_1', 'tool.exec', 'mch_1', 'ok', '{"command":"ls"}');
  });
  const store = new SqliteStore(file);
  try {
    expect(await store.verifyAudit('acc_old')).toMatchObject({ ok: true, rows: 2 });
    const [exec, remove] = await store.listAudit('acc_old', { limit: 10 });
    expect(exec).toMatchObject({ tool: 'exec', credentialId: 'con_1', machineId: 'mch_1' });
    expect(remove).toMatchObject({ userId: 'usr_old', tool: null });
  } finally {
    await store.close();
  }
});
