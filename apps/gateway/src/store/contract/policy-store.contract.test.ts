import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { PolicyStore } from '../policy-store';
import { PgPolicyStore } from '../postgres/pg-policy-store';
import { SqliteOAuthStore } from '../sqlite/sqlite-oauth-store';
import { SqlitePolicyStore } from '../sqlite/sqlite-policy-store';
import type { AuditEventInput } from '../types';
import { type TwoInstances, twoInstanceBackends } from './two-instance-backends';

const backends = twoInstanceBackends<PolicyStore>({
  sqlite: (core) => {
    new SqliteOAuthStore(core); // the in-use check reads its connections
    return new SqlitePolicyStore(core);
  },
  postgres: (database) => new PgPolicyStore(database),
  // Each case makes its own account, so the PostgreSQL database is shared by the cases without emptying it.
  truncate: [],
});

const AT = '2026-12-01T10:00:00.000Z';
const rev = (name: string, source: string, author = 'user:u1') => ({
  name,
  source,
  parsed: { name, shell: 'full' },
  author,
  at: AT,
});

/** Two store instances on one database, as two gateways have. */
describe.each(backends)('PolicyStore on $name', (backend) => {
  let t: TwoInstances<PolicyStore>;
  let policies: PolicyStore;
  let accountId: string;
  let ownerId: string;
  const audit = (action: string, target: string): AuditEventInput => ({
    accountId,
    at: AT,
    actor: 'user:u1',
    action,
    target,
  });
  const auditRows = (action: string) =>
    t.rows<{ details: string | null }>(
      'SELECT details FROM audit_events WHERE account_id = ? AND action = ? ORDER BY id',
      [accountId, action],
    );
  const grantToken = (id: string, grant: unknown, revokedAt: string | null = null, expiresAt: string | null = null) =>
    t.exec(
      `INSERT INTO api_tokens (id, account_id, user_id, name, token_hash, "grant", created_at, expires_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [id, accountId, ownerId, `token ${id}`, `hash-${id}`, JSON.stringify(grant), AT, expiresAt, revokedAt],
    );
  const grantConnection = (id: string, grant: unknown) =>
    t.exec(
      `INSERT INTO oauth_connections (id, account_id, user_id, client_id, client_name, redirect_uri, resource, groups, "grant", created_at)
       VALUES (?, ?, ?, 'cli', 'Claude', 'http://localhost/cb', 'http://localhost/mcp', '[]', ?, ?)`,
      [id, accountId, ownerId, JSON.stringify(grant), AT],
    );

  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    t = await backend.open();
    policies = t.a;
    const suffix = randomBytes(4).toString('hex');
    accountId = `acc_${suffix}`;
    ownerId = `usr_${suffix}`;
    await t.exec('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', [accountId, 'acme', AT]);
    await t.exec('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, NULL, ?)', [ownerId, 'owner', AT]);
  });
  afterEach(() => backend.close());

  test('create makes version 1, a second create of the name is refused, and the audit row is written', async () => {
    expect(await policies.create(accountId, rev('ops', 'name = "ops"'), audit('policy.create', 'ops'))).toBe(true);
    expect(await t.b.create(accountId, rev('ops', 'other'), audit('policy.create', 'ops'))).toBe(false);
    const got = await policies.get(accountId, 'ops');
    expect(got).toMatchObject({ name: 'ops', version: 1, source: 'name = "ops"', createdBy: 'user:u1' });
    expect(got?.parsed).toEqual({ name: 'ops', shell: 'full' });
    const rows = await auditRows('policy.create');
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]?.details ?? '{}')).toMatchObject({ version: 1 });
  });

  test('two creates of one name at once: one wins, one audit row', async () => {
    const got = await Promise.all([
      policies.create(accountId, rev('dup', 'a'), audit('policy.create', 'dup')),
      t.b.create(accountId, rev('dup', 'b'), audit('policy.create', 'dup')),
    ]);
    expect(got.sort()).toEqual([false, true]);
    expect(await policies.versions(accountId, 'dup')).toHaveLength(1);
    expect(await auditRows('policy.create')).toHaveLength(1);
  });

  test('every update is a new revision and history keeps all of them, newest first', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    expect(
      await policies.update(accountId, rev('ops', 'v2', 'user:u2'), undefined, audit('policy.update', 'ops')),
    ).toBe(2);
    expect(await t.b.update(accountId, rev('ops', 'v3'), 2, audit('policy.update', 'ops'))).toBe(3);
    expect((await policies.versions(accountId, 'ops')).map((v) => [v.version, v.source])).toEqual([
      [3, 'v3'],
      [2, 'v2'],
      [1, 'v1'],
    ]);
    expect(await policies.version(accountId, 'ops', 2)).toMatchObject({ source: 'v2', author: 'user:u2' });
    expect(await policies.version(accountId, 'ops', 9)).toBeNull();
    expect((await t.b.get(accountId, 'ops'))?.version).toBe(3);
    expect((await policies.list(accountId)).map((p) => [p.name, p.version])).toEqual([['ops', 3]]);
  });

  test('an update against a stale version or a missing policy changes nothing', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    await policies.update(accountId, rev('ops', 'v2'), 1, audit('policy.update', 'ops'));
    expect(await policies.update(accountId, rev('ops', 'stale'), 1, audit('policy.update', 'ops'))).toBeNull();
    expect(await policies.update(accountId, rev('nope', 'x'), undefined, audit('policy.update', 'nope'))).toBeNull();
    expect((await policies.get(accountId, 'ops'))?.source).toBe('v2');
    expect(await auditRows('policy.update')).toHaveLength(1);
  });

  test('two instances updating at once get distinct versions', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    for (let round = 0; round < 5; round++) {
      const got = await Promise.all([
        policies.update(accountId, rev('ops', `a${round}`), undefined, audit('policy.update', 'ops')),
        t.b.update(accountId, rev('ops', `b${round}`), undefined, audit('policy.update', 'ops')),
      ]);
      expect(got.sort()).toEqual([2 + 2 * round, 3 + 2 * round]);
    }
    expect(await policies.versions(accountId, 'ops')).toHaveLength(11);
  });

  test('two instances updating from one base version at once: one saves, the other is refused as stale', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    const got = await Promise.all([
      policies.update(accountId, rev('ops', 'a'), 1, audit('policy.update', 'ops')),
      t.b.update(accountId, rev('ops', 'b'), 1, audit('policy.update', 'ops')),
    ]);
    expect(got.filter((v) => v === 2)).toHaveLength(1);
    expect(got.filter((v) => v === null)).toHaveLength(1);
    expect(await policies.versions(accountId, 'ops')).toHaveLength(2);
    expect(await auditRows('policy.update')).toHaveLength(1);
  });

  test('delete is refused while a live token or connection names the policy, and names them', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    await grantToken('tok_1', { policy: 'ops', machines: '*', scopes: '*' });
    await grantConnection('con_1', { policy: 'ops', machines: '*', scopes: '*' });
    // An expired token no longer counts.
    await grantToken('tok_old', { policy: 'ops', machines: '*', scopes: '*' }, null, '2026-01-01T00:00:00.000Z');
    const uses = await t.b.delete(accountId, 'ops', audit('policy.delete', 'ops'));
    expect(uses?.map((u) => [u.kind, u.id, u.label, u.userName])).toEqual([
      ['api_token', 'tok_1', 'token tok_1', 'owner'],
      ['connection', 'con_1', 'Claude', 'owner'],
    ]);
    expect(await policies.get(accountId, 'ops')).not.toBeNull();

    // Revoked credentials no longer count: then the delete goes through, history with it.
    await t.exec('UPDATE api_tokens SET revoked_at = ? WHERE id = ?', [AT, 'tok_1']);
    await t.exec('UPDATE oauth_connections SET revoked_at = ? WHERE id = ?', [AT, 'con_1']);
    expect(await policies.delete(accountId, 'ops', audit('policy.delete', 'ops'))).toEqual([]);
    expect(await policies.get(accountId, 'ops')).toBeNull();
    expect(await policies.versions(accountId, 'ops')).toEqual([]);
    expect(await t.b.delete(accountId, 'ops', audit('policy.delete', 'ops'))).toBeNull();
    expect(await auditRows('policy.delete')).toHaveLength(1);
  });

  test('two deletes at once from two instances: one deletes, the other finds nothing, one audit row', async () => {
    await policies.create(accountId, rev('gone', 'v1'), audit('policy.create', 'gone'));
    const got = await Promise.all([
      policies.delete(accountId, 'gone', audit('policy.delete', 'gone')),
      t.b.delete(accountId, 'gone', audit('policy.delete', 'gone')),
    ]);
    expect(got.map((g) => (g === null ? 'none' : g.length))).toEqual(expect.arrayContaining([0, 'none']));
    expect(await auditRows('policy.delete')).toHaveLength(1);
  });

  test('an update racing a delete either saves before it or finds nothing: no revision outlives its policy', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `race${round}`;
      await policies.create(accountId, rev(name, 'v1'), audit('policy.create', name));
      const [updated] = await Promise.all([
        policies.update(accountId, rev(name, 'v2'), undefined, audit('policy.update', name)),
        t.b.delete(accountId, name, audit('policy.delete', name)),
      ]);
      expect(updated === null || updated === 2).toBe(true);
      expect(await policies.get(accountId, name)).toBeNull();
      expect(await policies.versions(accountId, name)).toEqual([]);
    }
  });

  test('an inline policy object or a built-in name in a grant is no use of a stored policy', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    await grantToken('tok_2', { policy: { name: 'ops' }, machines: '*', scopes: '*' });
    await grantToken('tok_3', { policy: 'full', machines: '*', scopes: '*' });
    expect(await policies.usesOf(accountId, 'ops', AT)).toEqual([]);
  });

  test('account switches default to everything on but the legacy SSE transport, and are saved with their audit row', async () => {
    expect(await policies.settings(accountId)).toMatchObject({
      mcpHttp: true,
      stdioBridge: true,
      legacySse: false,
      disabledToolGroups: [],
      updatedAt: null,
    });
    const saved = await policies.saveSettings(
      accountId,
      { mcpHttp: false, stdioBridge: true, legacySse: false, disabledToolGroups: ['screen', 'commands', 'screen'] },
      audit('account_settings.update', accountId),
    );
    expect(saved).toMatchObject({ mcpHttp: false, legacySse: false, disabledToolGroups: ['commands', 'screen'] });
    expect(saved.stdioBridge).toBe(true);
    expect(saved.updatedBy).toBe('user:u1');
    expect(await t.b.settings(accountId)).toEqual(saved);
    expect(await auditRows('account_settings.update')).toHaveLength(1);
  });

  test('two first saves of the switches at once both land, one after the other', async () => {
    const on = { mcpHttp: true, stdioBridge: true, legacySse: true, disabledToolGroups: [] };
    await Promise.all([
      policies.saveSettings(accountId, { ...on, mcpHttp: false }, audit('account_settings.update', accountId)),
      t.b.saveSettings(accountId, { ...on, legacySse: false }, audit('account_settings.update', accountId)),
    ]);
    const s = await policies.settings(accountId);
    // The later save wins whole (each save is the full set of switches).
    expect([s.mcpHttp, s.legacySse].sort()).toEqual([false, true]);
    expect(await auditRows('account_settings.update')).toHaveLength(2);
  });
});
