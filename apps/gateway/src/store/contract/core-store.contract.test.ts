import { resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { openIdentityStore } from '../../identity/open-identity-store';
import { encodeMachinesCursor } from '../machine-page';
import type { AuditEventInput, Machine, MachineReach, Store } from '../types';
import { type CoreInstances, coreBackends, storeProcess } from './core-backends';

/**
 * The core Store's contract on both dialects: every case runs on SQLite and on PostgreSQL, with two store
 * instances on one database (two gateways) where a decision could race.
 */

const AT = '2026-12-01T10:00:00.000Z';
const identityOpener = resolve(import.meta.dirname, '../../identity/open-identity-store.ts');
const oauthOpener = resolve(import.meta.dirname, '../../oauth/open-oauth-store.ts');

describe.each(coreBackends())('core Store on $name', (backend) => {
  let t: CoreInstances;
  let store: Store;
  let accountId: string;
  let ownerId: string;

  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    t = await backend.open();
    store = t.a;
    ({
      account: { id: accountId },
      owner: { id: ownerId },
    } = await store.bootstrap(AT));
  });
  afterEach(() => backend.close());

  const audit = (action: string, extra: Partial<AuditEventInput> = {}): AuditEventInput => ({
    accountId,
    at: AT,
    actor: `user:${ownerId}`,
    action,
    ...extra,
  });
  const count = async (query: string, params: unknown[] = []) =>
    Number((await t.rows<{ n: number | string }>(query, params))[0]?.n);

  let seq = 0;
  function machine(name: string, extra: Partial<Machine> = {}): Machine {
    seq++;
    return {
      id: `mch_${seq}_${Math.random().toString(36).slice(2, 8)}`,
      accountId,
      name,
      publicKey: `pk${seq}`,
      hostname: name,
      os: 'linux',
      osRelease: null,
      arch: 'x64',
      agentVersion: '0.1.0',
      labels: ['lab'],
      ceiling: null,
      ceilingSource: null,
      ceilingError: null,
      enrolledAt: AT,
      lastSeenAt: null,
      ...extra,
    };
  }
  async function joinToken(s: Store = store): Promise<string> {
    const id = `jt_${++seq}`;
    await s.createJoinToken(
      {
        id,
        accountId,
        createdBy: ownerId,
        createdAt: AT,
        expiresAt: '2030-01-01T00:00:00.000Z',
        usedAt: null,
        machineId: null,
        tokenHash: `h_${id}`,
      },
      audit('join_token.create', { target: id }),
    );
    return id;
  }
  async function enroll(name: string, onNameTaken: 'suffix' | 'refuse' = 'suffix', s: Store = store) {
    const m = machine(name);
    const r = await s.enrollMachine(await joinToken(s), m, audit('machine.enroll', { target: m.id }), onNameTaken);
    return { ...r, id: m.id };
  }

  test('bootstrap creates the account, its owner and one audit row once; every later run returns them', async () => {
    const again = await t.b.bootstrap('2027-01-01T00:00:00.000Z');
    expect(again.account).toEqual({ id: accountId, name: 'default', createdAt: AT });
    expect(again.owner).toMatchObject({ id: ownerId, name: 'owner', email: null, createdAt: AT });
    expect(await store.getUser(ownerId)).toEqual(again.owner);
    expect(await store.getUser('usr_nobody')).toBeNull();
    expect(await store.roleOf(accountId, ownerId)).toBe('owner');
    expect(await t.b.roleOf(accountId, 'usr_nobody')).toBeNull();
    expect(await count('SELECT count(*) AS n FROM accounts')).toBe(1);
    const rows = await store.listAudit(accountId, { limit: 10 });
    expect(rows.map((r) => r.action)).toEqual(['account.bootstrap']);
  });

  test('processes starting on one fresh database at the same moment all migrate it and agree on one account', async () => {
    for (let round = 0; round < 2; round++) {
      const fresh = await backend.fresh();
      try {
        const body = `
          const { openIdentityStore } = await import(${JSON.stringify(identityOpener)});
          const { openOAuthStore } = await import(${JSON.stringify(oauthOpener)});
          openIdentityStore(store); openOAuthStore(store);
          console.log((await store.bootstrap(new Date().toISOString())).account.id);`;
        const at = Date.now() + 4_000;
        const results = await Promise.all([0, 1, 2].map(() => storeProcess(fresh.location, body, [], at)));
        for (const r of results) expect(r.code, r.out).toBe(0);
        expect(new Set(results.map((r) => r.out.trim())).size).toBe(1);
      } finally {
        await fresh.drop();
      }
    }
  }, 90_000);

  test('an API token is found by its hash with its grant, touched, and its creation is in the log', async () => {
    const grant = { policy: 'read-only', machines: ['mch_1'], scopes: '*' as const };
    await store.createApiToken(
      {
        id: 'tok_1',
        accountId,
        userId: ownerId,
        name: 'ci',
        grant,
        createdAt: AT,
        expiresAt: null,
        revokedAt: null,
        tokenHash: 'hash_1',
      },
      audit('token.create', { target: 'tok_1' }),
    );
    expect(await t.b.findApiTokenByHash('hash_1')).toEqual({
      id: 'tok_1',
      accountId,
      userId: ownerId,
      name: 'ci',
      grant,
      createdAt: AT,
      expiresAt: null,
      revokedAt: null,
    });
    expect(await store.findApiTokenByHash('hash_2')).toBeNull();
    await store.touchApiToken('tok_1', '2026-12-02T00:00:00.000Z');
    expect(await t.rows('SELECT last_used_at AS at FROM api_tokens WHERE id = ?', ['tok_1'])).toEqual([
      { at: '2026-12-02T00:00:00.000Z' },
    ]);
    expect((await store.listAudit(accountId, { limit: 1 }))[0]).toMatchObject({ action: 'token.create' });
  });

  test('a change whose audit row cannot be written does not happen', async () => {
    const bad = { ...audit('token.create'), accountId: null as unknown as string };
    await expect(
      store.createApiToken(
        {
          id: 'tok_x',
          accountId,
          userId: ownerId,
          name: 'x',
          grant: { policy: 'full', machines: '*', scopes: '*' },
          createdAt: AT,
          expiresAt: null,
          revokedAt: null,
          tokenHash: 'hx',
        },
        bad,
      ),
    ).rejects.toThrow();
    expect(await store.findApiTokenByHash('hx')).toBeNull();
  });

  test('a join token enrolls one machine; used again it refuses and changes nothing', async () => {
    const jt = await joinToken();
    expect(await store.findJoinTokenByHash(`h_${jt}`)).toMatchObject({ id: jt, usedAt: null, machineId: null });
    const m = machine('box');
    expect(await store.enrollMachine(jt, m, audit('machine.enroll', { target: m.id }), 'suffix')).toEqual({
      ok: true,
      name: 'box',
    });
    expect(await store.findJoinTokenByHash(`h_${jt}`)).toMatchObject({ usedAt: AT, machineId: m.id });
    const again = machine('other');
    expect(await t.b.enrollMachine(jt, again, audit('machine.enroll'), 'suffix')).toEqual({
      ok: false,
      reason: 'token_used',
    });
    expect(await store.getMachine(again.id)).toBeNull();
    expect(await store.getMachine(m.id)).toEqual(m);
    const enrolled = await store.listAudit(accountId, { limit: 10, action: 'machine.enroll' });
    expect(enrolled.map((r) => r.details)).toEqual([{ name: 'box' }]);
  });

  test('two gateways enrolling with one join token at the same moment: exactly one machine', async () => {
    for (let i = 0; i < 5; i++) {
      const jt = await joinToken();
      const [m1, m2] = [machine(`race-${i}`), machine(`race-${i}`)];
      const results = await Promise.all([
        store.enrollMachine(jt, m1, audit('machine.enroll'), 'suffix'),
        t.b.enrollMachine(jt, m2, audit('machine.enroll'), 'suffix'),
      ]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'token_used' }]);
    }
    expect(await store.listMachines(accountId)).toHaveLength(5);
    expect((await store.verifyAudit(accountId)).ok).toBe(true);
  });

  test('two gateways enrolling one name at once with different tokens get distinct names', async () => {
    const results = await Promise.all([
      enroll('web'),
      enroll('web', 'suffix', t.b),
      enroll('WEB', 'suffix', t.b),
      enroll('web'),
    ]);
    expect(results.every((r) => r.ok)).toBe(true);
    const names = (await store.listMachines(accountId)).map((m) => m.name.toLowerCase());
    expect(new Set(names).size).toBe(4);
    const refused = await Promise.all([enroll('db', 'refuse'), enroll('DB', 'refuse', t.b)]);
    expect(refused.filter((r) => r.ok)).toHaveLength(1);
    expect(refused.filter((r) => !r.ok)).toMatchObject([{ ok: false, reason: 'name_taken' }]);
  });

  test('a taken name gets the first free suffix in any letter case, cut to fit 63 characters; refuse refuses', async () => {
    expect(await enroll('vm')).toMatchObject({ ok: true, name: 'vm' });
    expect(await enroll('VM')).toMatchObject({ ok: true, name: 'VM-2' });
    expect(await enroll('vm')).toMatchObject({ ok: true, name: 'vm-3' });
    const long = 'x'.repeat(63);
    expect(await enroll(long)).toMatchObject({ ok: true, name: long });
    expect(await enroll(long)).toMatchObject({ ok: true, name: `${'x'.repeat(61)}-2` });
    const refused = await enroll('Vm', 'refuse');
    expect(refused).toMatchObject({ ok: false, reason: 'name_taken' });
    expect(await store.getMachine(refused.id)).toBeNull();
    const last = (await store.listAudit(accountId, { limit: 1, action: 'machine.enroll' }))[0];
    expect(last?.details).toEqual({ name: `${'x'.repeat(61)}-2` });
  });

  test('machines list by name as bytes (upper case first), with every field read back as written', async () => {
    for (const n of ['b', 'A', 'c', 'B2']) await enroll(n);
    const list = await t.b.listMachines(accountId);
    expect(list.map((m) => m.name)).toEqual(['A', 'B2', 'b', 'c']);
    expect(list[0]).toMatchObject({ accountId, labels: ['lab'], ceiling: null, lastSeenAt: null });
    expect(await store.listMachines('acc_other')).toEqual([]);
  });

  test('rename: unique among the account machines in any letter case, with its audit row', async () => {
    const a = await enroll('alpha');
    const b = await enroll('beta');
    expect(await store.renameMachine(accountId, 'mch_none', 'x', audit('machine.rename'))).toEqual({
      ok: false,
      reason: 'not_found',
    });
    expect(await store.renameMachine('acc_other', a.id, 'x', audit('machine.rename'))).toEqual({
      ok: false,
      reason: 'not_found',
    });
    expect(await store.renameMachine(accountId, a.id, 'BETA', audit('machine.rename'))).toEqual({
      ok: false,
      reason: 'name_taken',
    });
    // Its own name in another case is no clash.
    expect(await t.b.renameMachine(accountId, a.id, 'Alpha', audit('machine.rename'))).toEqual({
      ok: true,
      previousName: 'alpha',
    });
    expect((await store.getMachine(a.id))?.name).toBe('Alpha');
    const row = (await store.listAudit(accountId, { limit: 1, action: 'machine.rename' }))[0];
    expect(row?.details).toEqual({ name: 'Alpha', previous_name: 'alpha' });
    expect((await store.getMachine(b.id))?.name).toBe('beta');
  });

  test('two gateways renaming two machines to one name at once: one of them is refused', async () => {
    for (let i = 0; i < 3; i++) {
      const a = await enroll(`a${i}`);
      const b = await enroll(`b${i}`);
      const results = await Promise.all([
        store.renameMachine(accountId, a.id, `same${i}`, audit('machine.rename')),
        t.b.renameMachine(accountId, b.id, `SAME${i}`, audit('machine.rename')),
      ]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'name_taken' }]);
    }
  });

  test('agent reports and ceilings are recorded; a ceiling report writes its audit row only when given one', async () => {
    const m = await enroll('seen');
    await store.recordAgentSeen(m.id, {
      hostname: 'seen.local',
      os: 'linux',
      osRelease: '6.1',
      arch: 'arm64',
      agentVersion: '0.2.0',
      at: '2026-12-01T11:00:00.000Z',
    });
    const before = (await store.listAudit(accountId, { limit: 100 })).length;
    await t.b.recordCeiling(
      m.id,
      { ceiling: { shell: 'none' }, source: '/etc/letkite/ceiling.json', error: null },
      null,
    );
    expect((await store.listAudit(accountId, { limit: 100 })).length).toBe(before);
    await t.b.recordCeiling(m.id, { ceiling: null, source: 'default', error: 'unreadable' }, audit('machine.ceiling'));
    expect((await store.listAudit(accountId, { limit: 1 }))[0]?.action).toBe('machine.ceiling');
    expect(await store.getMachine(m.id)).toMatchObject({
      hostname: 'seen.local',
      osRelease: '6.1',
      arch: 'arm64',
      agentVersion: '0.2.0',
      lastSeenAt: '2026-12-01T11:00:00.000Z',
      ceiling: null,
      ceilingSource: 'default',
      ceilingError: 'unreadable',
    });
    await store.recordCeiling(m.id, { ceiling: { shell: 'none' }, source: 'file', error: null }, null);
    expect((await t.b.getMachine(m.id))?.ceiling).toEqual({ shell: 'none' });
  });

  test('redaction patterns: none at first, replaced as a whole, each change in the log', async () => {
    expect(await store.getRedactionPatterns(accountId)).toEqual([]);
    await store.setRedactionPatterns(accountId, ['sk-[a-z]+', 'AKIA[0-9A-Z]{16}'], audit('redaction.update'));
    expect(await t.b.getRedactionPatterns(accountId)).toEqual(['sk-[a-z]+', 'AKIA[0-9A-Z]{16}']);
    await t.b.setRedactionPatterns(accountId, [], audit('redaction.update'));
    expect(await store.getRedactionPatterns(accountId)).toEqual([]);
    expect(await store.listAudit(accountId, { limit: 10, action: 'redaction.update' })).toHaveLength(2);
    expect(await store.getRedactionPatterns('acc_other')).toEqual([]);
  });
  test('standalone audit rows appended at once through two gateways are each committed once, chained, in order', async () => {
    const appends = Array.from({ length: 40 }, (_, n) =>
      (n % 2 === 0 ? store : t.b).appendAudit(audit('tool.exec', { target: `call-${n}`, outcome: 'ok' })),
    );
    const ids = await Promise.all(appends);
    expect(new Set(ids).size).toBe(40);
    // Each resolved id is a committed row holding that call's target.
    const rows = await t.rows<{ id: number | string; target: string }>(
      "SELECT id, target FROM audit_events WHERE action = 'tool.exec' ORDER BY id",
    );
    expect(rows).toHaveLength(40);
    const byId = new Map(rows.map((r) => [Number(r.id), r.target]));
    ids.forEach((id, n) => {
      expect(byId.get(id)).toBe(`call-${n}`);
    });
    // One gateway's rows keep the order they were appended in.
    const fromA = ids.filter((_, n) => n % 2 === 0);
    expect(fromA).toEqual([...fromA].sort((x, y) => x - y));
    expect(await t.b.verifyAudit(accountId)).toMatchObject({ ok: true, rows: 41 });
  });

  describe('machines a principal reaches, paged in the store', () => {
    // The reach filter reads the identity domain's group tables; the gateway opens (and so migrates) it with the
    // core store.
    beforeEach(() => {
      openIdentityStore(store);
    });

    /** The reach rule as the gateway decided it before the store did (the JS filter over the whole list). */
    async function oracle(reach: MachineReach): Promise<Machine[]> {
      const identity = openIdentityStore(store);
      const claims = await identity.machineClaims(reach.accountId);
      const mine = new Set(await identity.groupsOfUser(reach.accountId, reach.userId));
      const byGroups = (m: Machine) =>
        reach.seesClaimedMachines || (claims.get(m.id)?.some((g) => mine.has(g)) ?? true);
      const allowed = reach.machineIds;
      return (await store.listMachines(reach.accountId))
        .filter((m) => byGroups(m) && (allowed === '*' || allowed.includes(m.id)))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
    }

    async function walk(s: Store, reach: MachineReach, limit: number): Promise<Machine[][]> {
      const pages: Machine[][] = [];
      let cursor: string | null = null;
      do {
        const page = await s.pageReachableMachines(reach, { cursor, limit });
        expect(page.machines.length).toBeLessThanOrEqual(limit);
        pages.push(page.machines);
        cursor = page.nextCursor;
      } while (cursor !== null && pages.length < 200);
      return pages;
    }

    const ids = (ms: Machine[]) => ms.map((m) => m.id);

    /**
     * Two groups: `ops` (member alice) claims m-b and m-c, `db` (member bob) claims m-c and m-d; m-a and m-e are
     * unclaimed; m-x is revoked; another account's machine and its group's claim on m-a change nothing here.
     */
    async function fleet() {
      const m: Record<string, string> = {};
      for (const n of ['m-e', 'm-a', 'm-c', 'M-b', 'm-d', 'm-x']) m[n] = (await enroll(n)).id;
      await t.exec('UPDATE machines SET revoked_at = ? WHERE id = ?', [AT, m['m-x']]);
      for (const u of ['usr_alice', 'usr_bob', 'usr_carol']) {
        await t.exec('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, NULL, ?)', [u, u, AT]);
      }
      await t.exec('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', ['acc_other', 'other', AT]);
      await t.exec(
        'INSERT INTO machines (id, account_id, name, public_key, labels, enrolled_at) VALUES (?, ?, ?, ?, ?, ?)',
        ['mch_foreign', 'acc_other', 'm-a', 'pkf', '[]', AT],
      );
      const identity = openIdentityStore(store);
      const group = (id: string, account: string, memberIds: string[], machineIds: string[]) =>
        identity.saveGroup(
          { id, accountId: account, name: id, createdAt: AT, memberIds, machineIds },
          audit('group.save', { accountId: account }),
        );
      await group('grp_ops', accountId, ['usr_alice'], [m['M-b'] as string, m['m-c'] as string]);
      await group('grp_db', accountId, ['usr_bob'], [m['m-c'] as string, m['m-d'] as string]);
      await group('grp_foreign', 'acc_other', ['usr_carol'], [m['m-a'] as string]);
      return m;
    }

    test('every principal reaches what the gateway decided before, listed, paged and resolved alike', async () => {
      const m = await fleet();
      const some = [m['m-a'], m['M-b'], m['m-d'], m['m-x'], 'mch_foreign', 'mch_none', m['m-a']] as string[];
      const reaches: MachineReach[] = [];
      for (const userId of [ownerId, 'usr_alice', 'usr_bob', 'usr_carol']) {
        for (const seesClaimedMachines of [true, false]) {
          for (const machineIds of ['*', some, [m['m-c'] as string], []] as MachineReach['machineIds'][]) {
            reaches.push({ accountId, userId, seesClaimedMachines, machineIds });
          }
        }
      }
      reaches.push({ accountId: 'acc_other', userId: 'usr_carol', seesClaimedMachines: false, machineIds: '*' });
      for (const reach of reaches) {
        const expected = await oracle(reach);
        const label = JSON.stringify(reach);
        expect(ids(await t.b.listReachableMachines(reach)), label).toEqual(ids(expected));
        for (const limit of [1, 2, 1000]) {
          expect(ids((await walk(t.b, reach, limit)).flat()), `${label} by ${limit}`).toEqual(ids(expected));
        }
        for (const ref of [...Object.keys(m), ...Object.values(m), 'mch_foreign', 'm-b']) {
          const found = await store.findReachableMachines(reach, ref);
          expect(ids(found), `${label} ${ref}`).toEqual(ids(expected.filter((x) => x.id === ref || x.name === ref)));
        }
      }
      // The rule's corners, spelled out: alice (a member) reaches the unclaimed and her group's claims only.
      const alice = { accountId, userId: 'usr_alice', seesClaimedMachines: false, machineIds: '*' } as const;
      expect((await store.listReachableMachines(alice)).map((x) => x.name)).toEqual(['M-b', 'm-a', 'm-c', 'm-e']);
      const carol = { ...alice, userId: 'usr_carol' };
      expect((await store.listReachableMachines(carol)).map((x) => x.name)).toEqual(['m-a', 'm-e']);
    });

    test('pages: one position each, a machine added or removed between pages shows where its name puts it', async () => {
      const m: Record<string, string> = {};
      for (const n of ['n-1', 'n-3', 'n-5', 'n-7']) m[n] = (await enroll(n)).id;
      const reach: MachineReach = { accountId, userId: ownerId, seesClaimedMachines: true, machineIds: '*' };
      const first = await store.pageReachableMachines(reach, { cursor: null, limit: 2 });
      expect(first.machines.map((x) => x.name)).toEqual(['n-1', 'n-3']);
      expect(first.nextCursor).not.toBeNull();
      // Between pages: one machine before the cursor, one after it; one after it leaves.
      await enroll('n-2');
      await enroll('n-4');
      await t.exec('UPDATE machines SET revoked_at = ? WHERE id = ?', [AT, m['n-5']]);
      const second = await t.b.pageReachableMachines(reach, { cursor: first.nextCursor, limit: 2 });
      expect(second.machines.map((x) => x.name)).toEqual(['n-4', 'n-7']);
      // The last page: exactly `limit` rows left, and no cursor after them.
      expect(second.nextCursor).toBeNull();
      // Equal names (a revoked machine's name taken again) are ordered by id and both positions hold.
      const twin = await enroll('n-5');
      await t.exec('UPDATE machines SET revoked_at = NULL WHERE id = ?', [m['n-5']]);
      const all = (await walk(store, reach, 1)).flat();
      expect(all.map((x) => x.name)).toEqual(['n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-5', 'n-7']);
      expect(all.filter((x) => x.name === 'n-5').map((x) => x.id)).toEqual([m['n-5'], twin.id].sort());
      // A cursor is a position: one naming no machine at all still pages from where it points.
      const between = await store.pageReachableMachines(reach, {
        cursor: encodeMachinesCursor({ name: 'n-3z', id: '' }),
        limit: 1,
      });
      expect(between.machines.map((x) => x.name)).toEqual(['n-4']);
    });

    test('a page holds 1 to 1000 machines and only cursors the store made: anything else is invalid_params', async () => {
      await enroll('only');
      const reach: MachineReach = { accountId, userId: ownerId, seesClaimedMachines: true, machineIds: '*' };
      for (const limit of [0, -1, 1.5, 1001, Number.NaN]) {
        await expect(store.pageReachableMachines(reach, { cursor: null, limit }), String(limit)).rejects.toMatchObject({
          code: 'invalid_params',
        });
      }
      expect((await store.pageReachableMachines(reach, { cursor: null, limit: 1000 })).machines).toHaveLength(1);
      const forged = [
        'not-a-cursor',
        Buffer.from('[1,2]').toString('base64url'),
        Buffer.from('["a"]').toString('base64url'),
        Buffer.from('{"name":"a","id":"b"}').toString('base64url'),
      ];
      for (const cursor of forged) {
        await expect(store.pageReachableMachines(reach, { cursor, limit: 10 }), cursor).rejects.toMatchObject({
          code: 'invalid_params',
        });
      }
    });
  });
});
