import { Hono } from 'hono';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { LocalCoordination } from '../coordination/local-coordination';
import { SqliteOAuthStore } from '../store/sqlite/sqlite-oauth-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { OAuthContext } from './oauth-deps';
import { OAuthError } from './oauth-error';
import type { AuthorizationCode } from './oauth-store';
import { DEFAULT_REGISTRATIONS_PER_HOUR, pruneUnusedClients, registerClient } from './register-client';
import { oauthRoutes } from './routes';

let core: SqliteStore;
let oauth: SqliteOAuthStore;
let clock: Date;
let ctx: Pick<OAuthContext, 'oauth' | 'now' | 'coordination'>;
const metadata = { client_name: 'Some AI', redirect_uris: ['http://127.0.0.1:9999/callback'] };

beforeEach(() => {
  core = new SqliteStore(':memory:');
  oauth = new SqliteOAuthStore(core);
  clock = new Date('2026-12-01T10:00:00Z');
  ctx = {
    oauth: { store: oauth } as unknown as OAuthContext['oauth'],
    now: () => clock,
    coordination: new LocalCoordination(),
  };
});
afterEach(async () => core.close());

const outcome = (address: string) =>
  registerClient(ctx, metadata, address).then(
    () => 'registered',
    (err: unknown) => (err instanceof OAuthError ? err.error : String(err)),
  );

test('one address gets the configured registrations an hour; other addresses are not affected', async () => {
  const limit = 4;
  ctx.oauth.registrationsPerHour = limit;
  const answers: string[] = [];
  for (let i = 0; i < limit + 3; i++) answers.push(await outcome('203.0.113.9'));
  expect(answers.filter((a) => a === 'registered')).toHaveLength(limit);
  expect(answers.slice(limit)).toEqual(['rate_limited', 'rate_limited', 'rate_limited']);
  expect(await outcome('198.51.100.1')).toBe('registered');
  clock = new Date(clock.getTime() + 3_600_000);
  expect(await outcome('203.0.113.9')).toBe('registered');
});

test('concurrent registrations from one address are each counted (the default limit)', async () => {
  const limit = DEFAULT_REGISTRATIONS_PER_HOUR;
  const answers = await Promise.all(
    Array.from({ length: DEFAULT_REGISTRATIONS_PER_HOUR + 10 }, () => outcome('203.0.113.10')),
  );
  expect(answers.filter((a) => a === 'registered')).toHaveLength(limit);
});

test('over the limit, POST /oauth/register answers 429 rate_limited with Retry-After', async () => {
  const limit = DEFAULT_REGISTRATIONS_PER_HOUR;
  const app = new Hono();
  app.route('/', oauthRoutes({ ...ctx, log: () => {}, publicUrl: 'http://localhost:1' } as unknown as OAuthContext));
  const register = () =>
    app.request('/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(metadata),
    });
  for (let i = 0; i < limit; i++) expect((await register()).status).toBe(201);
  const refused = await register();
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBe(3600);
  expect(await refused.json()).toMatchObject({ error: 'rate_limited' });
});

test('registrations never used within 24 hours are pruned; used and recent ones stay', async () => {
  const { account, owner } = await core.bootstrap(clock.toISOString());
  const old = clock;
  await oauth.registerClient({ clientId: 'lkcl_unused', metadata, createdAt: old.toISOString() });
  await oauth.registerClient({ clientId: 'lkcl_used', metadata, createdAt: old.toISOString() });
  const code: AuthorizationCode = {
    accountId: account.id,
    userId: owner.id,
    clientId: 'lkcl_used',
    clientName: null,
    redirectUri: metadata.redirect_uris[0] as string,
    codeChallenge: 'c',
    resource: 'http://localhost:1/mcp',
    groups: ['commands'],
    grant: { policy: 'default', machines: '*', scopes: '*' } as unknown as AuthorizationCode['grant'],
    createdAt: old.toISOString(),
    expiresAt: new Date(old.getTime() + 60_000).toISOString(),
  };
  await oauth.createAuthorizationCode('hash-1', code, {
    accountId: account.id,
    at: old.toISOString(),
    actor: `user:${owner.id}`,
    action: 'oauth.authorize',
    target: 'lkcl_used',
    outcome: 'ok',
  });
  clock = new Date(old.getTime() + 23 * 3_600_000);
  await oauth.registerClient({ clientId: 'lkcl_recent', metadata, createdAt: clock.toISOString() });
  expect(await pruneUnusedClients(ctx)).toBe(0);
  clock = new Date(old.getTime() + 24 * 3_600_000 + 1);
  expect(await pruneUnusedClients(ctx)).toBe(1);
  expect(await oauth.getClient('lkcl_unused')).toBeNull();
  expect(await oauth.getClient('lkcl_used')).not.toBeNull();
  expect(await oauth.getClient('lkcl_recent')).not.toBeNull();
});
