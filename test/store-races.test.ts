import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { hashSecret } from '../apps/gateway/src/auth/secrets';
import { hashPassword } from '../apps/gateway/src/identity/passwords';
import { PASSWORD_TRIES } from '../apps/gateway/src/identity/sign-in-limiter';
import { SqliteOAuthStore } from '../apps/gateway/src/store/sqlite/sqlite-oauth-store';
import { SqliteStore } from '../apps/gateway/src/store/sqlite/sqlite-store';
import { TestAccount, type TestPerson, totpCode } from './support/approvals';
import { TestGateway } from './support/letkite';
import { CliProcess, freePort, removeDir, tempDir } from './support/processes';

/**
 * Check-then-write races (issue #12, "decisions inside transactions"): concurrent requests against real gateway
 * processes, two of them on one database where the race is between gateways.
 */

/** The REST API's answer (errors as `{ error: { code } }`). */
type ApiBody = { error?: { code?: string } } & Record<string, unknown>;
/** The token endpoint's answer (RFC 6749: `error` is a string). */
type TokenBody = { error?: string; refresh_token?: string } & Record<string, unknown>;

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(new URL(path, url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as ApiBody };
}

async function asUser(gw: TestGateway, p: TestPerson, method: string, path: string, body?: unknown) {
  const res = await fetch(new URL(path, gw.url), {
    method,
    headers: {
      cookie: p.cookie,
      origin: gw.url,
      'x-csrf-token': p.csrf,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as ApiBody };
}

describe('one gateway, concurrent requests', () => {
  let gw: TestGateway;
  let account: TestAccount;

  beforeAll(async () => {
    gw = await TestGateway.start();
    account = await TestAccount.open(gw);
  }, 60_000);

  afterAll(async () => {
    await account?.close();
    await gw?.dispose();
  });

  test('concurrent wrong passwords get no more tries than the limiter allows, then the right password waits', async () => {
    const person = await account.person('Pia', 'member');
    const password = 'the right long password';
    account.store.sqlite
      .prepare('UPDATE user_passwords SET password_hash = ? WHERE user_id = ?')
      .run(await hashPassword(password), person.userId);
    // Nine at once from one address: the per-(address, e-mail) limiter lets exactly PASSWORD_TRIES through.
    const attempts = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        post(gw.url, '/api/auth/password', { email: person.email, password: `wrong guess ${i}`, code: '000000' }),
      ),
    );
    const codes = attempts.map((a) => a.body.error?.code);
    // An attempt that was let through to the password check answers `unauthenticated`; a held one `rate_limited`.
    expect(codes.filter((c) => c === 'unauthenticated').length).toBe(PASSWORD_TRIES);
    expect(codes.every((c) => c === 'unauthenticated' || c === 'rate_limited')).toBe(true);
    const right = await post(gw.url, '/api/auth/password', {
      email: person.email,
      password,
      code: await totpCode(person),
    });
    expect(right.body.error?.code).toBe('rate_limited');
    const lockouts = account.store.sqlite
      .prepare("SELECT count(*) AS n FROM audit_events WHERE action = 'user.sign_in_throttled' AND target = ?")
      .get(person.userId) as { n: number };
    expect(lockouts.n).toBe(1);
  }, 60_000);

  test('two owners demoting each other at once leave the account one owner', async () => {
    const a = await account.person('Olga', 'owner');
    for (let round = 0; round < 6; round++) {
      const b = await account.person(`Bert${round}`, 'admin');
      account.store.sqlite
        .prepare("UPDATE memberships SET role = 'owner' WHERE account_id = ? AND user_id = ?")
        .run(account.accountId, b.userId);
      const [ab, ba] = await Promise.all([
        asUser(gw, a, 'PATCH', `/api/members/${b.userId}`, { role: 'member' }),
        asUser(gw, b, 'PATCH', `/api/members/${a.userId}`, { role: 'member' }),
      ]);
      const owners = account.store.sqlite
        .prepare("SELECT user_id FROM memberships WHERE account_id = ? AND role = 'owner'")
        .all(account.accountId) as { user_id: string }[];
      expect(owners.length, `round ${round}: ${ab.status} ${ba.status}`).toBe(1);
      // The loser is refused: `conflict` (last owner), or `forbidden` when the winner's change already reached it.
      expect([ab.status, ba.status].sort()[0]).toBe(200);
      expect([403, 409]).toContain([ab.status, ba.status].sort()[1]);
      // Put Olga back as the only owner for the next round.
      account.store.sqlite
        .prepare("UPDATE memberships SET role = 'owner' WHERE account_id = ? AND user_id = ?")
        .run(account.accountId, a.userId);
      account.store.sqlite
        .prepare('DELETE FROM memberships WHERE account_id = ? AND user_id = ?')
        .run(account.accountId, b.userId);
    }
  }, 60_000);

  test('an owner removing two owners at once keeps one of them', async () => {
    const a = await account.person('Olga', 'owner');
    for (let round = 0; round < 6; round++) {
      const b = await account.person(`Rita${round}`, 'admin');
      account.store.sqlite
        .prepare("UPDATE memberships SET role = 'owner' WHERE account_id = ? AND user_id = ?")
        .run(account.accountId, b.userId);
      const [self, other] = await Promise.all([
        asUser(gw, a, 'DELETE', `/api/members/${b.userId}`),
        asUser(gw, b, 'DELETE', `/api/members/${a.userId}`),
      ]);
      const owners = account.store.sqlite
        .prepare("SELECT user_id FROM memberships WHERE account_id = ? AND role = 'owner'")
        .all(account.accountId) as { user_id: string }[];
      expect(owners.length, `round ${round}: ${self.status} ${other.status}`).toBe(1);
      // Whoever is left gets Olga back as the only owner for the next round.
      account.store.sqlite
        .prepare(
          "INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?) ON CONFLICT DO UPDATE SET role = 'owner'",
        )
        .run(account.accountId, a.userId, new Date().toISOString());
      account.store.sqlite
        .prepare('DELETE FROM memberships WHERE account_id = ? AND user_id = ?')
        .run(account.accountId, b.userId);
    }
  }, 60_000);
});

/** Two gateway processes on one database file, as two gateways of a cluster share one database. */
async function twoGateways(
  dataDir: string,
  extra: Record<string, string> = {},
): Promise<{ procs: CliProcess[]; urls: string[] }> {
  const ports = [await freePort(), await freePort()];
  const procs = ports.map(
    (port) =>
      new CliProcess(['gateway'], {
        LETKITE_PORT: String(port),
        LETKITE_HEARTBEAT_MS: '1000',
        LETKITE_DATA: dataDir,
        LETKITE_PUBLIC_URL: 'http://localhost:1',
        ...extra,
      }),
  );
  await Promise.all(procs.map((p) => p.waitForOutput(/listening on/)));
  return { procs, urls: ports.map((port) => `http://localhost:${port}`) };
}

describe('two gateways on one database', () => {
  const dirs: string[] = [];
  const procs: CliProcess[] = [];

  afterEach(async () => {
    await Promise.all(procs.splice(0).map((p) => p.stop()));
    for (const d of dirs.splice(0)) removeDir(d);
  });

  test('starting two gateways at once on a fresh database makes one account, one owner and one VAPID key pair', async () => {
    const dir = tempDir('gw2');
    dirs.push(dir);
    const started = await twoGateways(dir);
    procs.push(...started.procs);
    const people = await TestAccount.open({ dataDir: dir } as TestGateway);
    const store = people.store;
    try {
      const n = (q: string) => (store.sqlite.prepare(q).get() as { n: number }).n;
      expect(n('SELECT count(*) AS n FROM accounts')).toBe(1);
      expect(n("SELECT count(*) AS n FROM memberships WHERE role = 'owner'")).toBe(1);
      expect(n("SELECT count(*) AS n FROM audit_events WHERE action = 'account.bootstrap'")).toBe(1);
      // Both answer the same VAPID public key (made once, by whichever asked first).
      const olga = await people.person('Olga', 'owner');
      const keys = await Promise.all(
        started.urls.map(async (url) => {
          const res = await fetch(new URL('/api/push/vapid-public-key', url), { headers: { cookie: olga.cookie } });
          expect(res.status).toBe(200);
          return ((await res.json()) as { public_key: string }).public_key;
        }),
      );
      expect(keys[0]).toBe(keys[1]);
      expect(n('SELECT count(*) AS n FROM push_vapid_keys')).toBe(1);
    } finally {
      await people.close();
    }
  }, 60_000);

  test('an authorization code redeemed at both gateways at once mints at most one connection, and a refresh token used twice at once rotates once', async () => {
    const dir = tempDir('gw2');
    dirs.push(dir);
    const started = await twoGateways(dir);
    procs.push(...started.procs);
    const [a, b] = started.urls as [string, string];
    const store = new SqliteStore(join(dir, 'letkite.db'));
    const oauth = new SqliteOAuthStore(store);
    try {
      const { account, owner } = await store.bootstrap(new Date().toISOString());
      const token = (url: string, form: Record<string, string>) =>
        fetch(new URL('/oauth/token', url), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(form).toString(),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as TokenBody }));
      for (let i = 0; i < 20; i++) {
        const code = randomBytes(24).toString('base64url');
        const verifier = randomBytes(40).toString('base64url');
        const now = new Date();
        await oauth.createAuthorizationCode(
          hashSecret(code),
          {
            accountId: account.id,
            userId: owner.id,
            clientId: 'race-client',
            clientName: 'race',
            redirectUri: 'http://127.0.0.1/cb',
            codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
            resource: 'http://localhost:1/mcp',
            groups: ['commands'],
            grant: { policy: 'default', machines: '*', scopes: '*' } as never,
            createdAt: now.toISOString(),
            expiresAt: new Date(now.getTime() + 60_000).toISOString(),
          },
          { accountId: account.id, at: now.toISOString(), actor: 'test', action: 'oauth.code' },
        );
        const form = { grant_type: 'authorization_code', client_id: 'race-client', code, code_verifier: verifier };
        const answers = await Promise.all([token(a, form), token(b, form)]);
        const statuses = answers.map((x) => x.status);
        // Never a server error, and never two connections from one code.
        expect(
          statuses.every((s) => s === 200 || s === 400),
          JSON.stringify(answers),
        ).toBe(true);
        // One redemption wins; the other is a reuse (which revokes what the winner got, RFC 6749 §4.1.2).
        expect([...statuses].sort()).toEqual([200, 400]);
        expect(answers.find((x) => x.status === 400)?.body.error).toBe('invalid_grant');
      }
      const created = store.sqlite
        .prepare("SELECT count(*) AS n FROM audit_events WHERE action = 'connection.create'")
        .get() as { n: number };
      expect(created.n).toBe(20);

      // A fresh code per round, redeemed once, then its refresh token sent to both gateways at once.
      for (let i = 0; i < 20; i++) {
        const code = randomBytes(24).toString('base64url');
        const verifier = randomBytes(40).toString('base64url');
        const now = new Date();
        await oauth.createAuthorizationCode(
          hashSecret(code),
          {
            accountId: account.id,
            userId: owner.id,
            clientId: 'race-client',
            clientName: 'race',
            redirectUri: 'http://127.0.0.1/cb',
            codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
            resource: 'http://localhost:1/mcp',
            groups: ['commands'],
            grant: { policy: 'default', machines: '*', scopes: '*' } as never,
            createdAt: now.toISOString(),
            expiresAt: new Date(now.getTime() + 60_000).toISOString(),
          },
          { accountId: account.id, at: now.toISOString(), actor: 'test', action: 'oauth.code' },
        );
        const first = await token(a, {
          grant_type: 'authorization_code',
          client_id: 'race-client',
          code,
          code_verifier: verifier,
        });
        expect(first.status).toBe(200);
        const form = {
          grant_type: 'refresh_token',
          client_id: 'race-client',
          refresh_token: first.body.refresh_token ?? '',
        };
        const answers = await Promise.all([token(a, form), token(b, form)]);
        const statuses = answers.map((x) => x.status);
        expect(
          statuses.every((s) => s === 200 || s === 400),
          JSON.stringify(answers),
        ).toBe(true);
        expect(statuses.filter((s) => s === 200).length).toBe(1);
        // The loser used a rotated token: the whole grant is revoked, so the winner's new refresh token is dead too.
        const winner = answers.find((x) => x.status === 200);
        const again = await token(b, {
          grant_type: 'refresh_token',
          client_id: 'race-client',
          refresh_token: winner?.body.refresh_token ?? '',
        });
        expect(again.status).toBe(400);
      }
    } finally {
      await store.close();
    }
  }, 120_000);
});
