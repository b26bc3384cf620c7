import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { AuditEventInput } from '../types';
import { SqliteOAuthStore } from './sqlite-oauth-store';
import { SqlitePolicyStore } from './sqlite-policy-store';
import { SqliteStore } from './sqlite-store';

const AT = '2026-12-01T10:00:00.000Z';
const rev = (name: string, source: string, author = 'user:u1') => ({
  name,
  source,
  parsed: { name, shell: 'full' },
  author,
  at: AT,
});

describe('SqlitePolicyStore', () => {
  let dir: string;
  let store: SqliteStore;
  let policies: SqlitePolicyStore;
  let accountId: string;
  let ownerId: string;
  const audit = (action: string, target: string): AuditEventInput => ({
    accountId,
    at: AT,
    actor: 'user:u1',
    action,
    target,
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'letkite-policy-store-'));
    store = new SqliteStore(join(dir, 'db.sqlite'));
    ({
      account: { id: accountId },
      owner: { id: ownerId },
    } = await store.bootstrap(AT));
    policies = new SqlitePolicyStore(store);
    new SqliteOAuthStore(store);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('create makes version 1, a second create of the name is refused, and the audit row is written', async () => {
    expect(await policies.create(accountId, rev('ops', 'name = "ops"'), audit('policy.create', 'ops'))).toBe(true);
    expect(await policies.create(accountId, rev('ops', 'other'), audit('policy.create', 'ops'))).toBe(false);
    const got = await policies.get(accountId, 'ops');
    expect(got).toMatchObject({ name: 'ops', version: 1, source: 'name = "ops"', createdBy: 'user:u1' });
    const rows = await store.listAudit(accountId, { limit: 10, action: 'policy.create' });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.details).toMatchObject({ version: 1 });
  });

  test('every update is a new revision and history keeps all of them, newest first', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    expect(
      await policies.update(accountId, rev('ops', 'v2', 'user:u2'), undefined, audit('policy.update', 'ops')),
    ).toBe(2);
    expect(await policies.update(accountId, rev('ops', 'v3'), 2, audit('policy.update', 'ops'))).toBe(3);
    expect((await policies.versions(accountId, 'ops')).map((v) => [v.version, v.source])).toEqual([
      [3, 'v3'],
      [2, 'v2'],
      [1, 'v1'],
    ]);
    expect(await policies.version(accountId, 'ops', 2)).toMatchObject({ source: 'v2', author: 'user:u2' });
    expect((await policies.get(accountId, 'ops'))?.version).toBe(3);
  });

  test('an update against a stale version or a missing policy changes nothing', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    await policies.update(accountId, rev('ops', 'v2'), 1, audit('policy.update', 'ops'));
    expect(await policies.update(accountId, rev('ops', 'stale'), 1, audit('policy.update', 'ops'))).toBeNull();
    expect(await policies.update(accountId, rev('nope', 'x'), undefined, audit('policy.update', 'nope'))).toBeNull();
    expect((await policies.get(accountId, 'ops'))?.source).toBe('v2');
    expect(await store.listAudit(accountId, { limit: 10, action: 'policy.update' })).toHaveLength(1);
  });

  test('two stores on one file updating at once get distinct versions', async () => {
    const other = new SqliteStore(join(dir, 'db.sqlite'));
    try {
      const second = new SqlitePolicyStore(other);
      await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
      const got = await Promise.all([
        policies.update(accountId, rev('ops', 'a'), undefined, audit('policy.update', 'ops')),
        second.update(accountId, rev('ops', 'b'), undefined, audit('policy.update', 'ops')),
      ]);
      expect(got.sort()).toEqual([2, 3]);
    } finally {
      await other.close();
    }
  });

  test('delete is refused while a live token or connection names the policy, and names them', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    await store.createApiToken(
      {
        id: 'tok_1',
        accountId,
        userId: ownerId,
        name: 'ci',
        grant: { policy: 'ops', machines: '*', scopes: '*' },
        createdAt: AT,
        expiresAt: null,
        revokedAt: null,
        tokenHash: 'h1',
      },
      audit('api_token.create', 'tok_1'),
    );
    store.sqlite
      .prepare(
        `INSERT INTO oauth_connections (id, account_id, user_id, client_id, client_name, redirect_uri, resource, groups, "grant", created_at)
         VALUES ('con_1', ?, ?, 'cli', 'Claude', 'http://localhost/cb', 'http://localhost/mcp', '[]', ?, ?)`,
      )
      .run(accountId, ownerId, JSON.stringify({ policy: 'ops', machines: '*', scopes: '*' }), AT);
    const uses = await policies.delete(accountId, 'ops', audit('policy.delete', 'ops'));
    expect(uses?.map((u) => [u.kind, u.id, u.label, u.userName])).toEqual([
      ['api_token', 'tok_1', 'ci', 'owner'],
      ['connection', 'con_1', 'Claude', 'owner'],
    ]);
    expect(await policies.get(accountId, 'ops')).not.toBeNull();

    // Revoked credentials no longer count: then the delete goes through, history with it.
    store.sqlite.prepare("UPDATE api_tokens SET revoked_at = ? WHERE id = 'tok_1'").run(AT);
    store.sqlite.prepare("UPDATE oauth_connections SET revoked_at = ? WHERE id = 'con_1'").run(AT);
    expect(await policies.delete(accountId, 'ops', audit('policy.delete', 'ops'))).toEqual([]);
    expect(await policies.get(accountId, 'ops')).toBeNull();
    expect(await policies.versions(accountId, 'ops')).toEqual([]);
    expect(await policies.delete(accountId, 'ops', audit('policy.delete', 'ops'))).toBeNull();
    expect(await store.listAudit(accountId, { limit: 10, action: 'policy.delete' })).toHaveLength(1);
  });

  test('an inline policy object or a built-in name in a grant is no use of a stored policy', async () => {
    await policies.create(accountId, rev('ops', 'v1'), audit('policy.create', 'ops'));
    await store.createApiToken(
      {
        id: 'tok_2',
        accountId,
        userId: ownerId,
        name: 'inline',
        grant: { policy: { name: 'ops' }, machines: '*', scopes: '*' },
        createdAt: AT,
        expiresAt: null,
        revokedAt: null,
        tokenHash: 'h2',
      },
      audit('api_token.create', 'tok_2'),
    );
    expect(await policies.usesOf(accountId, 'ops', AT)).toEqual([]);
  });

  test('account switches default to everything on and are saved with their audit row', async () => {
    expect(await policies.settings(accountId)).toMatchObject({
      mcpHttp: true,
      stdioBridge: true,
      legacySse: true,
      disabledToolGroups: [],
    });
    const saved = await policies.saveSettings(
      accountId,
      { mcpHttp: false, stdioBridge: true, legacySse: false, disabledToolGroups: ['screen', 'commands', 'screen'] },
      audit('account_settings.update', accountId),
    );
    expect(saved).toMatchObject({ mcpHttp: false, legacySse: false, disabledToolGroups: ['commands', 'screen'] });
    expect(saved.updatedBy).toBe('user:u1');
    expect(await store.listAudit(accountId, { limit: 10, action: 'account_settings.update' })).toHaveLength(1);
  });
});
