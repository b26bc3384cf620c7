import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { userActor } from '../../services/actor';
import { serviceContext } from '../../services/service-context';
import { openPolicyStore } from '../../store/open-policy-store';
import { SqliteIdentityStore } from '../../store/sqlite/sqlite-identity-store';
import { SqliteStore } from '../../store/sqlite/sqlite-store';
import type { IdentityDeps, OpContext } from '../op-context';
import { permissionsOf } from '../permissions';
import { changeMemberRole, removeMember } from './manage-members';

/**
 * Two store instances on one database file, as two gateways of a cluster would have: the keep-an-owner check
 * must hold when both demote (or remove) one of the last two owners at once.
 */
let dir: string;
let stores: SqliteStore[];
let accountId: string;
let owners: string[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lk-owners-'));
  const file = join(dir, 'letkite.db');
  stores = [new SqliteStore(file), new SqliteStore(file)];
  const first = stores[0] as SqliteStore;
  const { account, owner } = await first.bootstrap(new Date().toISOString());
  accountId = account.id;
  const second = 'usr_second_owner';
  first.sqlite
    .prepare('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, ?, ?)')
    .run(second, 'Bert', 'bert@letkite.test', new Date().toISOString());
  first.sqlite
    .prepare("INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)")
    .run(accountId, second, new Date().toISOString());
  owners = [owner.id, second];
});

afterEach(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

function ctxOf(store: SqliteStore, userId: string): OpContext {
  const deps = {
    store,
    identity: new SqliteIdentityStore(store),
    policies: openPolicyStore(store),
    mcp: { closeSessionsOf: async () => {}, closeSessionsOfUser: async () => {} },
    now: () => new Date(),
    log: () => {},
  } as unknown as IdentityDeps;
  const user = {
    userId,
    accountId,
    role: 'owner',
    permissions: permissionsOf('owner', null),
    sessionId: 's',
    name: userId,
  };
  return serviceContext(deps, userActor(user), accountId);
}

function ownerCount(): number {
  return (
    (stores[0] as SqliteStore).sqlite
      .prepare("SELECT count(*) AS n FROM memberships WHERE account_id = ? AND role = 'owner'")
      .get(accountId) as { n: number }
  ).n;
}

test('two owners demoting each other at once through two gateways leave one owner', async () => {
  const [a, b] = owners as [string, string];
  const results = await Promise.allSettled([
    changeMemberRole.call(ctxOf(stores[0] as SqliteStore, a), { user_id: b, role: 'member' }),
    changeMemberRole.call(ctxOf(stores[1] as SqliteStore, b), { user_id: a, role: 'member' }),
  ]);
  expect(ownerCount()).toBe(1);
  const refused = results.find((r) => r.status === 'rejected');
  expect((refused as PromiseRejectedResult | undefined)?.reason?.code).toBe('conflict');
});

test('two owners removing each other at once through two gateways leave one owner', async () => {
  const [a, b] = owners as [string, string];
  const results = await Promise.allSettled([
    removeMember.call(ctxOf(stores[0] as SqliteStore, a), { user_id: b }),
    removeMember.call(ctxOf(stores[1] as SqliteStore, b), { user_id: a }),
  ]);
  expect(ownerCount()).toBe(1);
  const refused = results.find((r) => r.status === 'rejected');
  expect((refused as PromiseRejectedResult | undefined)?.reason?.code).toBe('conflict');
});

test('a demotion and a removal of the last two owners at once leave one owner', async () => {
  const [a, b] = owners as [string, string];
  await Promise.allSettled([
    changeMemberRole.call(ctxOf(stores[0] as SqliteStore, a), { user_id: a, role: 'admin' }),
    removeMember.call(ctxOf(stores[1] as SqliteStore, b), { user_id: b }),
  ]);
  expect(ownerCount()).toBe(1);
});

test('the last owner cannot demote or remove themselves', async () => {
  const [a, b] = owners as [string, string];
  await removeMember.call(ctxOf(stores[0] as SqliteStore, a), { user_id: b });
  await expect(
    changeMemberRole.call(ctxOf(stores[0] as SqliteStore, a), { user_id: a, role: 'admin' }),
  ).rejects.toMatchObject({ code: 'conflict' });
  await expect(removeMember.call(ctxOf(stores[1] as SqliteStore, a), { user_id: a })).rejects.toMatchObject({
    code: 'conflict',
  });
  expect(ownerCount()).toBe(1);
});
