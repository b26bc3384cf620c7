import { resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { AuditEventInput, Machine, Store } from '../types';
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
});
