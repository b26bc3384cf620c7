import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { AuthorizationCode, IssuedTokens } from '../../oauth/oauth-store';
import { SqliteOAuthStore } from './sqlite-oauth-store';
import { SqliteStore } from './sqlite-store';

/** Two store instances on one database file, as two gateways have. */
let dir: string;
let cores: SqliteStore[];
let stores: SqliteOAuthStore[];
let code: AuthorizationCode;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lk-oauth-'));
  const file = join(dir, 'letkite.db');
  cores = [new SqliteStore(file), new SqliteStore(file)];
  stores = cores.map((c) => new SqliteOAuthStore(c));
  const { account, owner } = await (cores[0] as SqliteStore).bootstrap(new Date().toISOString());
  code = {
    accountId: account.id,
    userId: owner.id,
    clientId: 'client',
    clientName: null,
    redirectUri: 'http://127.0.0.1/cb',
    codeChallenge: 'c',
    resource: 'http://x/mcp',
    groups: ['commands'],
    grant: { policy: 'default', machines: '*', scopes: '*' } as unknown as AuthorizationCode['grant'],
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
  };
});

afterEach(async () => {
  for (const c of cores) await c.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function tokens(refreshExpiresInMs = 60_000): IssuedTokens {
  n++;
  return {
    accessTokenHash: `at${n}`,
    accessExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    refreshTokenHash: `rt${n}`,
    refreshExpiresAt: new Date(Date.now() + refreshExpiresInMs).toISOString(),
  } as IssuedTokens;
}
const audit = { accountId: 'a', at: '', actor: 't', action: 'x' };

async function redeem(s: SqliteOAuthStore, issued: IssuedTokens, check = true) {
  return s.redeemAuthorizationCode('code-hash', {
    now: new Date().toISOString(),
    connectionId: `con_${++n}`,
    check: () => check,
    tokens: issued,
    audit: () => audit,
    reuseAudit: () => audit,
  });
}
const rotate = (s: SqliteOAuthStore, hash: string, clientId = 'client') =>
  s.rotateRefreshToken(hash, {
    now: new Date().toISOString(),
    clientId,
    tokens: tokens(),
    reuseAudit: () => audit,
  });

test('a code redeemed through two gateways issues once; the second use revokes what the first made', async () => {
  await (stores[0] as SqliteOAuthStore).createAuthorizationCode('code-hash', code, audit);
  const outcomes = await Promise.all(stores.map((s) => redeem(s, tokens())));
  expect(outcomes.map((o) => o.kind).sort()).toEqual(['issued', 'reused']);
  const issued = outcomes.find((o) => o.kind === 'issued');
  const id = issued?.kind === 'issued' ? issued.connection.id : '';
  expect((await (stores[1] as SqliteOAuthStore).getConnection(id))?.revokedAt).not.toBeNull();
});

test('a failed check burns the code', async () => {
  await (stores[0] as SqliteOAuthStore).createAuthorizationCode('code-hash', code, audit);
  expect((await redeem(stores[0] as SqliteOAuthStore, tokens(), false)).kind).toBe('invalid');
  expect((await redeem(stores[1] as SqliteOAuthStore, tokens())).kind).toBe('reused');
});

test('a refresh by another client or with an expired token is invalid and burns nothing; reuse revokes', async () => {
  await (stores[0] as SqliteOAuthStore).createAuthorizationCode('code-hash', code, audit);
  const first = tokens();
  expect((await redeem(stores[0] as SqliteOAuthStore, first)).kind).toBe('issued');
  expect((await rotate(stores[1] as SqliteOAuthStore, first.refreshTokenHash, 'other')).kind).toBe('invalid');
  const outcomes = await Promise.all(stores.map((s) => rotate(s, first.refreshTokenHash)));
  expect(outcomes.map((o) => o.kind).sort()).toEqual(['reused', 'rotated']);
  expect((await rotate(stores[0] as SqliteOAuthStore, 'unknown')).kind).toBe('invalid');
});

test('an expired refresh token is invalid, not a reuse', async () => {
  await (stores[0] as SqliteOAuthStore).createAuthorizationCode('code-hash', code, audit);
  const first = tokens(-1);
  expect((await redeem(stores[0] as SqliteOAuthStore, first)).kind).toBe('issued');
  expect((await rotate(stores[1] as SqliteOAuthStore, first.refreshTokenHash)).kind).toBe('invalid');
});
