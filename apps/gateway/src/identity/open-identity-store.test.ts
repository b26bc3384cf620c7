import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { PgIdentityStore } from '../store/postgres/pg-identity-store';
import { PgStore } from '../store/postgres/pg-store';
import { createTestDatabase } from '../store/postgres/test-database';
import { SqliteIdentityStore } from '../store/sqlite/sqlite-identity-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { openIdentityStore } from './open-identity-store';
import { TotpSeedCipher } from './totp-seed-cipher';

/** The opener hands each core store its identity twin on the same database, with the seed key when given. */
let testDb: { url: string; drop(): Promise<void> };
let store: PgStore;

beforeAll(async () => {
  testDb = await createTestDatabase();
  store = await PgStore.open(testDb.url);
});
afterAll(async () => {
  await store.database.close();
  await testDb.drop();
});

test('on a PgStore it is the PostgreSQL identity store, sealing TOTP seeds with the given key', async () => {
  const now = new Date().toISOString();
  await store.database.pool.query('INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)', ['acc', 'A', now]);
  await store.database.pool.query('INSERT INTO users (id, name, email, created_at) VALUES ($1, $2, $3, $4)', [
    'usr',
    'U',
    null,
    now,
  ]);
  const identity = openIdentityStore(store, { secretKey: randomBytes(32) });
  expect(identity).toBeInstanceOf(PgIdentityStore);
  await identity.setPasswordAndTotp(
    'usr',
    { passwordHash: 'h', totpSecret: 'JBSWY3DPEHPK3PXP', totpStep: 1, recoveryCodeHashes: [] },
    now,
    { accountId: 'acc', at: now, actor: 'user:usr', action: 'password.set' },
  );
  expect((await identity.getTotp('usr'))?.secret).toBe('JBSWY3DPEHPK3PXP');
  const raw = await store.database.pool.query('SELECT secret FROM totp_secrets');
  expect(TotpSeedCipher.isSealed(raw.rows[0]?.secret)).toBe(true);
  // Without the key the store still opens, but refuses to touch a seed.
  await expect(openIdentityStore(store).getTotp('usr')).rejects.toMatchObject({ code: 'internal' });
});

test('on a SqliteStore it is the SQLite identity store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lk-open-identity-'));
  const sqlite = new SqliteStore(join(dir, 'letkite.db'));
  try {
    expect(openIdentityStore(sqlite)).toBeInstanceOf(SqliteIdentityStore);
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
