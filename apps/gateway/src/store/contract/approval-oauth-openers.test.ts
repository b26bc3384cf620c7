import { afterAll, beforeAll, expect, test } from 'vitest';
import { openApprovals } from '../../approvals/open-approvals';
import { LocalCoordination } from '../../coordination/local-coordination';
import { createMailer } from '../../notify/mailer';
import { openOAuthStore } from '../../oauth/open-oauth-store';
import { PgApprovalStore } from '../postgres/pg-approval-store';
import { PgOAuthStore } from '../postgres/pg-oauth-store';
import { PgStore } from '../postgres/pg-store';
import { createTestDatabase } from '../postgres/test-database';

/** The openers hand a PostgreSQL core store its domain twins, sharing its pool (and so its transactions). */
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

test('openOAuthStore on a PgStore is the PostgreSQL OAuth store on its database', async () => {
  const oauth = openOAuthStore(store);
  expect(oauth).toBeInstanceOf(PgOAuthStore);
  expect(await oauth.getClient('nobody')).toBeNull();
});

test('openApprovals on a PgStore keeps its requests and keys in PostgreSQL', async () => {
  const approvals = openApprovals({
    store,
    coordination: new LocalCoordination(),
    mailer: createMailer({}),
    publicUrl: 'http://localhost:1',
    now: () => new Date(),
    log: () => {},
  });
  expect(approvals.store).toBeInstanceOf(PgApprovalStore);
  const keys = await approvals.store.vapidKeys(
    () => ({ publicKey: 'pub', privateKey: 'priv' }),
    new Date().toISOString(),
  );
  expect(keys).toEqual({ publicKey: 'pub', privateKey: 'priv' });
  const rows = await store.database.pool.query('SELECT public_key FROM push_vapid_keys');
  expect(rows.rows).toEqual([{ public_key: 'pub' }]);
});
