import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { AuthorizationCode, CodeOutcome, IssuedTokens, OAuthStore, RefreshOutcome } from '../../oauth/oauth-store';
import { PgOAuthStore } from '../postgres/pg-oauth-store';
import { SqliteOAuthStore } from '../sqlite/sqlite-oauth-store';
import { type TwoInstances, twoInstanceBackends } from './two-instance-backends';

/**
 * The OAuthStore contract, run against every implementation with two store instances on one database, as two
 * gateways have them (two-instance-backends.ts): SQLite on a temp file (two connections), PostgreSQL on one test
 * database (two pools), emptied before each case. Raw SQL (`?` placeholders on both) seeds the account and person a
 * connection references and reads what was written.
 */
const backends = twoInstanceBackends<OAuthStore>({
  sqlite: (core) => new SqliteOAuthStore(core),
  postgres: (database) => new PgOAuthStore(database),
  // Every case seeds its account and person again, and starts without clients, codes, tokens or audit rows.
  truncate: [
    'oauth_access_tokens',
    'oauth_refresh_tokens',
    'oauth_authorization_codes',
    'oauth_connections',
    'oauth_clients',
    'audit_events',
    'audit_chains',
    'users',
    'accounts',
  ],
});

const accountId = 'acc_1';
const userId = 'usr_1';
let n = 0;
function tokens(refreshExpiresInMs = 60_000, accessExpiresInMs = 60_000): IssuedTokens {
  n++;
  return {
    accessTokenHash: `at${n}`,
    accessExpiresAt: new Date(Date.now() + accessExpiresInMs).toISOString(),
    refreshTokenHash: `rt${n}`,
    refreshExpiresAt: new Date(Date.now() + refreshExpiresInMs).toISOString(),
  };
}
const audit = (action: string) => ({ accountId, at: new Date().toISOString(), actor: `user:${userId}`, action });

describe.each(backends)('OAuthStore on $name', (backend) => {
  let env: TwoInstances<OAuthStore>;
  let s0: OAuthStore;
  let s1: OAuthStore;
  let code: AuthorizationCode;

  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    env = await backend.open();
    s0 = env.a;
    s1 = env.b;
    const at = new Date().toISOString();
    await env.exec('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', [accountId, 'Acme', at]);
    await env.exec('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, ?, ?)', [userId, 'Ada', null, at]);
    code = {
      accountId,
      userId,
      clientId: 'client',
      clientName: 'Claude',
      redirectUri: 'http://127.0.0.1/cb',
      codeChallenge: 'c',
      resource: 'http://x/mcp',
      groups: ['commands'],
      grant: { policy: 'default', machines: '*', scopes: '*' } as unknown as AuthorizationCode['grant'],
      createdAt: at,
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    };
  });
  afterEach(() => backend.close());
  /** The `n` column of a query's first row (PostgreSQL answers count(*) as text). */
  const count = async (query: string, params?: unknown[]) =>
    Number((await env.rows<{ n: number | string }>(query, params))[0]?.n);

  const countAudit = (action: string) => count('SELECT count(*) AS n FROM audit_events WHERE action = ?', [action]);

  function redeem(s: OAuthStore, issued: IssuedTokens, check = true, hash = 'code-hash'): Promise<CodeOutcome> {
    return s.redeemAuthorizationCode(hash, {
      now: new Date().toISOString(),
      connectionId: `con_${++n}`,
      check: () => check,
      tokens: issued,
      audit: () => audit('oauth.connect'),
      reuseAudit: () => audit('oauth.code_reuse'),
    });
  }
  const rotate = (s: OAuthStore, hash: string, clientId = 'client'): Promise<RefreshOutcome> =>
    s.rotateRefreshToken(hash, {
      now: new Date().toISOString(),
      clientId,
      tokens: tokens(),
      reuseAudit: () => audit('oauth.refresh_reuse'),
    });
  async function connect(issued = tokens()) {
    await s0.createAuthorizationCode('code-hash', code, audit('oauth.code'));
    const outcome = await redeem(s0, issued);
    if (outcome.kind !== 'issued') throw new Error(`expected issued, got ${outcome.kind}`);
    return outcome.connection;
  }

  test('clients register once, read back, and unused ones are pruned', async () => {
    const old = new Date(Date.now() - 60_000).toISOString();
    const metadata = { client_name: 'Claude', redirect_uris: ['http://127.0.0.1/cb'] };
    await s0.registerClient({ clientId: 'unused', metadata, createdAt: old });
    await s0.registerClient({ clientId: 'client', metadata, createdAt: old });
    await s0.registerClient({ clientId: 'fresh', metadata, createdAt: new Date().toISOString() });
    await expect(s1.registerClient({ clientId: 'unused', metadata, createdAt: old })).rejects.toThrow();
    expect(await s1.getClient('unused')).toEqual({ clientId: 'unused', metadata, createdAt: old });
    expect(await s1.getClient('nobody')).toBeNull();
    // `client` was issued a code: used, so kept.
    await s0.createAuthorizationCode('code-hash', code, audit('oauth.code'));
    expect(await s1.pruneUnusedClients(new Date(Date.now() - 1_000).toISOString())).toBe(1);
    expect(await s0.getClient('unused')).toBeNull();
    expect(await s0.getClient('client')).not.toBeNull();
    expect(await s0.getClient('fresh')).not.toBeNull();
  });

  test('a redeemed code makes a connection whose access token finds it, and the change is audited', async () => {
    const issued = tokens();
    const connection = await connect(issued);
    expect(connection).toMatchObject({ accountId, userId, clientId: 'client', groups: ['commands'], revokedAt: null });
    expect(await s1.getConnection(connection.id)).toEqual(connection);
    const found = await s1.findAccessToken(issued.accessTokenHash, new Date().toISOString());
    expect(found).toEqual({ connection, expiresAt: issued.accessExpiresAt });
    expect(await s1.findAccessToken(issued.accessTokenHash, new Date(Date.now() + 120_000).toISOString())).toBeNull();
    expect(await s1.findAccessToken('unknown', new Date().toISOString())).toBeNull();
    const at = new Date().toISOString();
    await s1.touchConnection(connection.id, at);
    expect((await s0.getConnection(connection.id))?.lastUsedAt).toBe(at);
    expect(await countAudit('oauth.code')).toBe(1);
    expect(await countAudit('oauth.connect')).toBe(1);
  });

  test('a code redeemed ten times at two gateways at once issues once; the reuse revokes what the first made', async () => {
    await s0.createAuthorizationCode('code-hash', code, audit('oauth.code'));
    const all = Array.from({ length: 10 }, () => tokens());
    const outcomes = await Promise.all(all.map((t, i) => redeem(i % 2 ? s1 : s0, t)));
    expect(outcomes.filter((o) => o.kind === 'issued')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'reused')).toHaveLength(9);
    const issued = outcomes.find((o) => o.kind === 'issued');
    const id = issued?.kind === 'issued' ? issued.connection.id : '';
    for (const o of outcomes) if (o.kind === 'reused') expect(o.connectionId).toBe(id);
    expect((await s1.getConnection(id))?.revokedAt).not.toBeNull();
    expect(await count('SELECT count(*) AS n FROM oauth_connections')).toBe(1);
    // The tokens it had are gone, and the revocation was audited once.
    for (const t of all) expect(await s0.findAccessToken(t.accessTokenHash, new Date().toISOString())).toBeNull();
    expect(await count('SELECT count(*) AS n FROM oauth_refresh_tokens')).toBe(0);
    expect(await countAudit('oauth.connect')).toBe(1);
    expect(await countAudit('oauth.code_reuse')).toBe(1);
  });

  test('a failed check burns the code; an unknown or expired code is invalid', async () => {
    await s0.createAuthorizationCode('code-hash', code, audit('oauth.code'));
    expect((await redeem(s0, tokens(), false)).kind).toBe('invalid');
    expect(await redeem(s1, tokens())).toEqual({ kind: 'reused', connectionId: null });
    expect((await redeem(s1, tokens(), true, 'unknown')).kind).toBe('invalid');
    await s0.createAuthorizationCode(
      'old-hash',
      { ...code, expiresAt: new Date(Date.now() - 1_000).toISOString() },
      audit('oauth.code'),
    );
    expect((await redeem(s1, tokens(), true, 'old-hash')).kind).toBe('invalid');
    expect(await count('SELECT count(*) AS n FROM oauth_connections')).toBe(0);
  });

  test('a refresh by another client is invalid and burns nothing; a rotation replaces the pair; reuse revokes', async () => {
    const first = tokens();
    const connection = await connect(first);
    expect((await rotate(s1, first.refreshTokenHash, 'other')).kind).toBe('invalid');
    const outcomes = await Promise.all([s0, s1].map((s) => rotate(s, first.refreshTokenHash)));
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['reused', 'rotated']);
    const reused = outcomes.find((o) => o.kind === 'reused');
    expect(reused?.kind === 'reused' && reused.connection.revokedAt).not.toBeNull();
    expect((await s0.getConnection(connection.id))?.revokedAt).not.toBeNull();
    expect((await rotate(s0, 'unknown')).kind).toBe('invalid');
    expect(await countAudit('oauth.refresh_reuse')).toBe(1);
  });

  test('a refresh rotated ten times at two gateways at once rotates once; a reuse revokes the grant, the rest are refused', async () => {
    const first = tokens();
    const connection = await connect(first);
    const issued: IssuedTokens[] = [];
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        const t = tokens();
        issued.push(t);
        return (i % 2 ? s1 : s0).rotateRefreshToken(first.refreshTokenHash, {
          now: new Date().toISOString(),
          clientId: 'client',
          tokens: t,
          reuseAudit: () => audit('oauth.refresh_reuse'),
        });
      }),
    );
    expect(outcomes.filter((o) => o.kind === 'rotated')).toHaveLength(1);
    // Exactly one of the others revokes; whoever comes after finds the grant revoked.
    expect(outcomes.filter((o) => o.kind === 'reused')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'invalid')).toHaveLength(8);
    expect((await s0.getConnection(connection.id))?.revokedAt).not.toBeNull();
    expect(await countAudit('oauth.refresh_reuse')).toBe(1);
    // What the winner got is gone with the grant.
    for (const t of issued) {
      expect(await s1.findAccessToken(t.accessTokenHash, new Date().toISOString())).toBeNull();
      expect((await rotate(s1, t.refreshTokenHash)).kind).toBe('invalid');
    }
  });

  test('a rotated pair works: the new refresh token rotates again, the old access token stays until it expires', async () => {
    const first = tokens();
    await connect(first);
    const second = tokens();
    const rotated = await s1.rotateRefreshToken(first.refreshTokenHash, {
      now: new Date().toISOString(),
      clientId: 'client',
      tokens: second,
      reuseAudit: () => audit('oauth.refresh_reuse'),
    });
    expect(rotated.kind).toBe('rotated');
    expect(await s0.findAccessToken(second.accessTokenHash, new Date().toISOString())).not.toBeNull();
    expect(await s0.findAccessToken(first.accessTokenHash, new Date().toISOString())).not.toBeNull();
    expect((await rotate(s0, second.refreshTokenHash)).kind).toBe('rotated');
  });

  test('an expired refresh token is invalid, not a reuse', async () => {
    const first = tokens(-1);
    const connection = await connect(first);
    expect((await rotate(s1, first.refreshTokenHash)).kind).toBe('invalid');
    expect((await s0.getConnection(connection.id))?.revokedAt).toBeNull();
  });

  test('revoking an access token forgets it only for its own client; a refresh token revokes the connection once', async () => {
    const issued = tokens();
    const connection = await connect(issued);
    const now = new Date().toISOString();
    expect(await s1.revokeToken(issued.accessTokenHash, 'other', now, () => audit('oauth.revoke'))).toBeNull();
    expect(await s0.findAccessToken(issued.accessTokenHash, now)).not.toBeNull();
    expect(await s1.revokeToken(issued.accessTokenHash, 'client', now, () => audit('oauth.revoke'))).toBeNull();
    expect(await s0.findAccessToken(issued.accessTokenHash, now)).toBeNull();
    expect((await s0.getConnection(connection.id))?.revokedAt).toBeNull();
    expect(await s1.revokeToken(issued.refreshTokenHash, 'other', now, () => audit('oauth.revoke'))).toBeNull();
    const results = await Promise.all(
      [s0, s1].map((s) => s.revokeToken(issued.refreshTokenHash, 'client', now, () => audit('oauth.revoke'))),
    );
    const revoked = results.filter((r) => r !== null);
    expect(revoked).toHaveLength(1);
    expect(revoked[0]).toMatchObject({ id: connection.id, revokedAt: now });
    expect(await countAudit('oauth.revoke')).toBe(1);
    expect(await s0.revokeToken('unknown', 'client', now, () => audit('oauth.revoke'))).toBeNull();
  });

  test('connections are listed per account and person, revoked ones on request; a revocation counts once', async () => {
    const connection = await connect();
    await s0.createAuthorizationCode('code-2', code, audit('oauth.code'));
    const second = await redeem(s1, tokens(), true, 'code-2');
    const secondId = second.kind === 'issued' ? second.connection.id : '';
    expect((await s1.listConnections(accountId, {})).map((c) => c.id).sort()).toEqual([connection.id, secondId].sort());
    expect(await s1.listConnections(accountId, { userId: 'usr_other' })).toEqual([]);
    expect(await s1.listConnections('acc_other', {})).toEqual([]);
    const now = new Date().toISOString();
    const results = await Promise.all(
      [s0, s1].map((s) => s.revokeConnection(connection.id, now, audit('oauth.disconnect'))),
    );
    expect(results.sort()).toEqual([false, true]);
    expect(await s0.revokeConnection('con_none', now, audit('oauth.disconnect'))).toBe(false);
    expect(await countAudit('oauth.disconnect')).toBe(1);
    expect((await s1.listConnections(accountId, { userId })).map((c) => c.id)).toEqual([secondId]);
    expect((await s1.listConnections(accountId, { includeRevoked: true })).map((c) => c.id).sort()).toEqual(
      [connection.id, secondId].sort(),
    );
  });
});
