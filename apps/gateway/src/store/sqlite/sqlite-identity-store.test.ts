import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { SqliteIdentityStore } from './sqlite-identity-store';
import { SqliteStore } from './sqlite-store';

/**
 * SQLite-only cases of the identity store; everything both dialects share is in
 * store/contract/identity-store.contract.test.ts.
 */
let dir: string;
let core: SqliteStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'lk-identity-'));
  core = new SqliteStore(join(dir, 'letkite.db'));
});

afterEach(async () => {
  await core.close();
  rmSync(dir, { recursive: true, force: true });
});

const identityMigrations = join(dirname(fileURLToPath(import.meta.url)), '../../../drizzle/sqlite-identity');

test('a database from before the password lock was dropped migrates, keeping its passwords', async () => {
  // The identity schema as 0000 and 0001 left it, applied with the migrator's bookkeeping, as an older gateway did.
  const older = readMigrationFiles({ migrationsFolder: identityMigrations }).slice(0, 2);
  core.sqlite.exec(
    'CREATE TABLE "__drizzle_migrations_identity" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)',
  );
  for (const m of older) {
    for (const stmt of m.sql) if (stmt.trim() !== '') core.sqlite.exec(stmt);
    core.sqlite
      .prepare('INSERT INTO "__drizzle_migrations_identity" (hash, created_at) VALUES (?, ?)')
      .run(m.hash, m.folderMillis);
  }
  const { owner } = await core.bootstrap(new Date().toISOString());
  core.sqlite
    .prepare(
      "INSERT INTO user_passwords (user_id, password_hash, failed_attempts, locked_until, updated_at) VALUES (?, 'h', 3, '2026-01-01T00:00:00.000Z', 'u')",
    )
    .run(owner.id);

  const identity = new SqliteIdentityStore(core);

  const columns = (core.sqlite.prepare('PRAGMA table_info(user_passwords)').all() as { name: string }[]).map(
    (c) => c.name,
  );
  expect(columns).toEqual(['user_id', 'password_hash', 'updated_at']);
  expect(await identity.getPassword(owner.id)).toEqual({ userId: owner.id, passwordHash: 'h' });
  // Opening again applies nothing twice.
  new SqliteIdentityStore(core);
  const applied = core.sqlite.prepare('SELECT count(*) AS n FROM "__drizzle_migrations_identity"').get() as {
    n: number;
  };
  expect(applied.n).toBe(readMigrationFiles({ migrationsFolder: identityMigrations }).length);
});

test('the member list is one statement however many members there are (it runs on every gated tool call)', async () => {
  const at = new Date().toISOString();
  const { account } = await core.bootstrap(at);
  const identity = new SqliteIdentityStore(core);
  for (const i of [1, 2, 3, 4]) {
    core.sqlite
      .prepare('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, ?, ?)')
      .run(`usr_${i}`, 'u', null, at);
    core.sqlite
      .prepare("INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, 'member', ?)")
      .run(account.id, `usr_${i}`, at);
  }
  core.sqlite
    .prepare("INSERT INTO user_passwords (user_id, password_hash, updated_at) VALUES ('usr_2', 'h', 'u')")
    .run();
  // Every statement drizzle runs is prepared on this connection, so the count is the number of queries.
  const prepare = vi.spyOn(core.sqlite, 'prepare');
  const members = await identity.listMembers(account.id);
  expect(prepare).toHaveBeenCalledTimes(1);
  prepare.mockRestore();
  expect(members).toHaveLength(5);
  expect(members.filter((m) => m.hasPassword).map((m) => m.user.id)).toEqual(['usr_2']);
});
