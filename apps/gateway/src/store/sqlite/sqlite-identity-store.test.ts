import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createOwnerSetupLink } from '../../identity/ops/create-setup-link';
import { SqliteIdentityStore } from './sqlite-identity-store';
import { SqliteStore } from './sqlite-store';

/** Two store instances on one database file, as two gateways have. */
let dir: string;
let cores: SqliteStore[];
let stores: SqliteIdentityStore[];
let accountId: string;
let ownerId: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lk-identity-'));
  const file = join(dir, 'letkite.db');
  cores = [new SqliteStore(file), new SqliteStore(file)];
  stores = cores.map((c) => new SqliteIdentityStore(c));
  const b = await (cores[0] as SqliteStore).bootstrap(new Date().toISOString());
  accountId = b.account.id;
  ownerId = b.owner.id;
  (cores[0] as SqliteStore).sqlite
    .prepare(
      "INSERT INTO user_passwords (user_id, password_hash, failed_attempts, locked_until, updated_at) VALUES (?, 'h', 0, NULL, '')",
    )
    .run(ownerId);
});

afterEach(async () => {
  for (const c of cores) await c.close();
  rmSync(dir, { recursive: true, force: true });
});

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
const claim = (s: SqliteIdentityStore, now: number) =>
  s.claimPasswordAttempt(ownerId, { now: at(now), lockAfter: 5, lockedUntil: at(now + 60_000) });

test('password attempts claimed at two gateways at once: five pass, the rest are refused, and the fifth locks', async () => {
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => claim(stores[i % 2] as SqliteIdentityStore, 0)),
  );
  const allowed = results.filter((r) => r.allowed);
  expect(allowed.map((r) => (r.allowed ? r.attempt : 0)).sort()).toEqual([1, 2, 3, 4, 5]);
  expect(results.filter((r) => !r.allowed)).toHaveLength(7);
  expect(results.find((r) => !r.allowed)).toEqual({ allowed: false, lockedUntil: at(60_000) });
});

test('an expired lock starts a fresh count; a right password clears it', async () => {
  const s = stores[0] as SqliteIdentityStore;
  for (let i = 0; i < 5; i++) await claim(s, 0);
  expect((await claim(s, 30_000)).allowed).toBe(false);
  expect(await claim(s, 60_000)).toEqual({ allowed: true, attempt: 1 });
  await s.resetPasswordFailures(ownerId);
  expect(await claim(s, 61_000)).toEqual({ allowed: true, attempt: 1 });
});

test('two gateways printing the owner setup link at once leave one live link', async () => {
  // The link is printed only while the owner has no way to sign in.
  (cores[0] as SqliteStore).sqlite.prepare('DELETE FROM user_passwords WHERE user_id = ?').run(ownerId);
  const now = new Date();
  await Promise.all(
    stores.map((identity) => createOwnerSetupLink({ identity, now, publicUrl: 'http://x' }, { accountId, ownerId })),
  );
  const open = (cores[0] as SqliteStore).sqlite
    .prepare('SELECT count(*) AS n FROM setup_links WHERE account_id = ? AND used_at IS NULL')
    .get(accountId) as { n: number };
  expect(open.n).toBe(1);
  // The database itself refuses a second open link (what a PostgreSQL read that missed the first would try).
  expect(() =>
    (cores[1] as SqliteStore).sqlite
      .prepare(
        "INSERT INTO setup_links (id, account_id, user_id, token_hash, created_at, expires_at) VALUES ('stl_x', ?, ?, 'hx', '', '')",
      )
      .run(accountId, ownerId),
  ).toThrow(/UNIQUE/);
});
