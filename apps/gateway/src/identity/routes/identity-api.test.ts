import { randomBytes } from 'node:crypto';
import { toLetKiteError } from '@letkite/protocol';
import { Hono } from 'hono';
import { Secret, TOTP } from 'otpauth';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { hashSecret } from '../../auth/secrets';
import { LocalCoordination } from '../../coordination/local-coordination';
import { httpStatusOf } from '../../http/error-status';
import { LocalHub } from '../../hub/local-hub';
import { createMailer } from '../../notify/mailer';
import { openPolicyStore } from '../../store/open-policy-store';
import { SqliteIdentityStore } from '../../store/sqlite/sqlite-identity-store';
import { SqliteStore } from '../../store/sqlite/sqlite-store';
import type { IdentityDeps } from '../op-context';
import { createOwnerSetupLink } from '../ops/create-setup-link';
import { signInWithPassword } from '../ops/sign-in-password';
import { TotpSeedCipher } from '../totp-seed-cipher';
import { identityApi } from './identity-api';

const ORIGIN = 'http://localhost:8787';

describe('identity REST API', () => {
  let store: SqliteStore;
  let deps: IdentityDeps;
  let app: Hono;
  let clock: Date;
  let owner: { id: string };
  let account: { id: string };
  let cookie = '';
  let csrf = '';
  const closed: string[] = [];

  beforeEach(async () => {
    clock = new Date('2026-11-30T10:00:00Z');
    store = new SqliteStore(':memory:');
    ({ account, owner } = await store.bootstrap(clock.toISOString()));
    deps = {
      store,
      identity: new SqliteIdentityStore(store, new TotpSeedCipher(randomBytes(32))),
      policies: openPolicyStore(store),
      mailer: createMailer({}),
      hub: new LocalHub(),
      coordination: new LocalCoordination(),
      now: () => clock,
      log: () => {},
      publicUrl: ORIGIN,
      mcp: {
        closeSessionsOf: async () => {},
        closeSessionsOfUser: async (userId: string) => {
          closed.push(userId);
          return 1;
        },
      },
    };
    app = new Hono();
    app.onError((err, c) => {
      const e = toLetKiteError(err);
      return c.json({ error: e.toPayload() }, httpStatusOf[e.code]);
    });
    app.route('/api', identityApi(deps));
    cookie = '';
    csrf = '';
  });
  afterEach(async () => store.close());

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await app.request(path, {
      method,
      headers: {
        'content-type': 'application/json',
        origin: ORIGIN,
        ...(cookie ? { cookie } : {}),
        ...(csrf ? { 'x-csrf-token': csrf } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const set = res.headers.get('set-cookie');
    if (set?.startsWith('letkite_session=')) cookie = set.split(';')[0] ?? '';
    // biome-ignore lint/suspicious/noExplicitAny: the tests read loosely typed JSON answers
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  const codeAt = (secret: string, at: Date) =>
    TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: at.getTime() });

  async function setUpOwnerWithPassword(password = 'correct horse battery') {
    const link = await createOwnerSetupLink(
      { identity: deps.identity, now: clock, publicUrl: ORIGIN },
      { accountId: account.id, ownerId: owner.id },
    );
    const token = link!.url.split('#')[1]!;
    const totp = await call('POST', '/api/onboard/totp', { token });
    const done = await call('POST', '/api/onboard/password', {
      token,
      challenge_id: totp.body.challenge_id,
      name: 'Olivia',
      email: 'olivia@example.com',
      password,
      code: codeAt(totp.body.secret, clock),
    });
    expect(done.status).toBe(200);
    return { secret: totp.body.secret as string, recovery: done.body.recovery_codes as string[], token };
  }

  test('the setup link makes the owner, signs them in, and works only once', async () => {
    const { token, recovery } = await setUpOwnerWithPassword();
    expect(recovery).toHaveLength(10);
    const session = await call('GET', '/api/session');
    expect(session.body.user).toMatchObject({ id: owner.id, name: 'Olivia', role: 'owner' });
    expect(session.body.user.permissions).toContain('members.manage');
    const again = await call('POST', '/api/onboard/inspect', { token });
    expect(again.body.error.code).toBe('invalid_token');
    expect(
      await createOwnerSetupLink(
        { identity: deps.identity, now: clock, publicUrl: ORIGIN },
        { accountId: account.id, ownerId: owner.id },
      ),
    ).toBeNull();
  });

  test('password + TOTP signs in, and the same code is refused the second time', async () => {
    const { secret } = await setUpOwnerWithPassword();
    cookie = '';
    clock = new Date(clock.getTime() + 60_000);
    const code = codeAt(secret, clock);
    const first = await call('POST', '/api/auth/password', {
      email: 'OLIVIA@example.com',
      password: 'correct horse battery',
      code,
    });
    expect(first.status).toBe(200);
    cookie = '';
    const replay = await call('POST', '/api/auth/password', {
      email: 'olivia@example.com',
      password: 'correct horse battery',
      code,
    });
    expect(replay.body.error.code).toBe('unauthenticated');
  });

  test('a recovery code signs in once', async () => {
    const { recovery } = await setUpOwnerWithPassword();
    cookie = '';
    const body = { email: 'olivia@example.com', password: 'correct horse battery', code: recovery[0] };
    expect((await call('POST', '/api/auth/password', body)).status).toBe(200);
    cookie = '';
    expect((await call('POST', '/api/auth/password', body)).body.error.code).toBe('unauthenticated');
  });

  test('after five wrong passwords from one address, that address waits before the next try, even with the right password', async () => {
    const { secret } = await setUpOwnerWithPassword();
    cookie = '';
    for (let i = 0; i < 5; i++) {
      clock = new Date(clock.getTime() + 31_000);
      const r = await call('POST', '/api/auth/password', {
        email: 'olivia@example.com',
        password: `wrong ${i}`,
        code: codeAt(secret, clock),
      });
      expect(r.body.error.code).toBe('unauthenticated');
    }
    clock = new Date(clock.getTime() + 1_000);
    const early = await call('POST', '/api/auth/password', {
      email: 'olivia@example.com',
      password: 'correct horse battery',
      code: codeAt(secret, clock),
    });
    expect(early.status).toBe(429);
    expect(early.body.error).toMatchObject({ code: 'rate_limited', details: { retry_after_s: 29 } });
    const audit = await store.listAudit(account.id, { limit: 5, action: 'user.sign_in_throttled' });
    expect(audit).toHaveLength(1);
    // A backoff, not a lock: once it has passed, the right password signs in.
    clock = new Date(clock.getTime() + 30_000);
    const later = await call('POST', '/api/auth/password', {
      email: 'olivia@example.com',
      password: 'correct horse battery',
      code: codeAt(secret, clock),
    });
    expect(later.status).toBe(200);
  });

  test("an attacker hammering a person's e-mail from one address cannot lock the person out: they sign in at once from theirs", async () => {
    const { secret } = await setUpOwnerWithPassword();
    const attempt = (address: string, password: string, code: string) =>
      signInWithPassword(
        { deps, now: clock, userAgent: null, clientAddress: address },
        {
          email: 'Olivia@Example.com',
          password,
          code,
        },
      ).then(
        () => 'ok',
        (err: unknown) => toLetKiteError(err).code,
      );
    const answers: string[] = [];
    for (let i = 0; i < 25; i++) answers.push(await attempt('203.0.113.66', `guess ${i}`, '123456'));
    expect(answers.slice(0, 5)).toEqual(Array(5).fill('unauthenticated'));
    expect(new Set(answers.slice(5))).toEqual(new Set(['rate_limited']));
    clock = new Date(clock.getTime() + 31_000);
    expect(await attempt('198.51.100.7', 'correct horse battery', codeAt(secret, clock))).toBe('ok');
    // The attacker's address keeps its backoff: one more guess after the wait, then twice as long.
    expect(await attempt('203.0.113.66', 'guess again', '123456')).toBe('unauthenticated');
    clock = new Date(clock.getTime() + 59_000);
    expect(await attempt('203.0.113.66', 'and again', '123456')).toBe('rate_limited');
  });

  test('a cross-site sign-in request is refused before anything is checked', async () => {
    const r = await call(
      'POST',
      '/api/auth/password',
      { email: 'a@b.c', password: 'x', code: '123456' },
      { origin: 'https://evil.example' },
    );
    expect(r.status).toBe(403);
    expect(r.body.error.details.reason).toBe('origin');
  });

  test('a signed-in change without the CSRF token is refused', async () => {
    await setUpOwnerWithPassword();
    const noToken = await call('POST', '/api/roles', { name: 'approvers', permissions: ['approvals.decide'] });
    expect(noToken.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'csrf' } });
    csrf = (await call('GET', '/api/session')).body.csrf_token;
    const ok = await call('POST', '/api/roles', { name: 'approvers', permissions: ['approvals.decide'] });
    expect(ok.status).toBe(200);
    expect((await store.listAudit(account.id, { limit: 1, action: 'role.create' }))[0]?.target).toBe(ok.body.id);
  });

  test('an invited member with a custom role lacking clients.connect cannot create an API token', async () => {
    await setUpOwnerWithPassword();
    csrf = (await call('GET', '/api/session')).body.csrf_token;
    const role = await call('POST', '/api/roles', { name: 'approvers', permissions: ['approvals.decide'] });
    const invite = await call('POST', '/api/invitations', {
      email: 'max@example.com',
      role: 'member',
      custom_role_id: role.body.id,
    });
    expect(invite.body).toMatchObject({ sent: false });
    const token = (invite.body.link as string).split('#')[1];
    cookie = '';
    csrf = '';
    const totp = await call('POST', '/api/onboard/totp', { token });
    const joined = await call('POST', '/api/onboard/password', {
      token,
      challenge_id: totp.body.challenge_id,
      name: 'Max',
      email: 'max@example.com',
      password: 'another long password',
      code: codeAt(totp.body.secret, clock),
    });
    expect(joined.status).toBe(200);
    const me = await call('GET', '/api/session');
    expect(me.body.user.permissions).toEqual(['approvals.decide']);
    csrf = me.body.csrf_token;
    const denied = await call('POST', '/api/tokens', { name: 'mine' });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'clients.connect' } });
  });

  test('two invitations to one account accepted at once by a signed-in person: one joins, the other is conflict', async () => {
    // Max joins the first account by an invitation, so he is signed in; a second account then invites him twice.
    await setUpOwnerWithPassword();
    csrf = (await call('GET', '/api/session')).body.csrf_token;
    const invite = await call('POST', '/api/invitations', { email: 'max@example.com', role: 'member' });
    const first = (invite.body.link as string).split('#')[1];
    cookie = '';
    csrf = '';
    const totp = await call('POST', '/api/onboard/totp', { token: first });
    const joined = await call('POST', '/api/onboard/password', {
      token: first,
      challenge_id: totp.body.challenge_id,
      name: 'Max',
      email: 'max@example.com',
      password: 'another long password',
      code: codeAt(totp.body.secret, clock),
    });
    expect(joined.status).toBe(200);
    csrf = (await call('GET', '/api/session')).body.csrf_token;
    store.sqlite
      .prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)')
      .run('acc_other', 'Other', clock.toISOString());
    const tokens = { member: 'lkinv_other_member_0001', admin: 'lkinv_other_admin_0002' };
    for (const [role, token] of Object.entries(tokens) as ['member' | 'admin', string][]) {
      await deps.identity.createInvitation(
        {
          id: `inv_other_${role}`,
          accountId: 'acc_other',
          email: 'max@example.com',
          role,
          customRoleId: null,
          invitedBy: owner.id,
          tokenHash: hashSecret(token),
          createdAt: clock.toISOString(),
          expiresAt: new Date(clock.getTime() + 86_400_000).toISOString(),
          acceptedAt: null,
          revokedAt: null,
        },
        {
          accountId: 'acc_other',
          at: clock.toISOString(),
          actor: 'system',
          action: 'invitation.create',
          outcome: 'ok',
        },
      );
    }
    // Both pass the op's "already a member" read before either writes; the membership insert decides.
    const answers = await Promise.all([
      call('POST', '/api/invitations/accept', { token: tokens.member }),
      call('POST', '/api/invitations/accept', { token: tokens.admin }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)?.body.error.code).toBe('conflict');
    const winner = answers[0]?.status === 200 ? 'member' : 'admin';
    const max = await deps.identity.findUserByEmail('max@example.com');
    expect((await deps.identity.membership('acc_other', max?.id ?? ''))?.role).toBe(winner);
    const open = await deps.identity.listInvitations('acc_other');
    expect(open.filter((i) => i.acceptedAt === null).map((i) => i.id)).toEqual([
      `inv_other_${winner === 'member' ? 'admin' : 'member'}`,
    ]);
  });

  test("revoking a session signs it out and closes the person's MCP sessions", async () => {
    await setUpOwnerWithPassword();
    const me = await call('GET', '/api/session');
    csrf = me.body.csrf_token;
    const sessions = await call('GET', '/api/me/sessions');
    const current = sessions.body.sessions[0].id;
    const r = await call('DELETE', `/api/me/sessions/${current}`);
    expect(r.body).toEqual({ closed_mcp_sessions: 1 });
    expect(closed).toContain(owner.id);
    expect((await call('GET', '/api/session')).body.user).toBeNull();
  });
});
