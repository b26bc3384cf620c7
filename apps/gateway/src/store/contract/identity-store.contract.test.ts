import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { IdentityStore, Onboarding, StoredPasskey, WebSession } from '../../identity/identity-store';
import { createOwnerSetupLink } from '../../identity/ops/create-setup-link';
import { TotpSeedCipher } from '../../identity/totp-seed-cipher';
import { PgIdentityStore } from '../postgres/pg-identity-store';
import { SqliteIdentityStore } from '../sqlite/sqlite-identity-store';
import type { AuditEventInput } from '../types';
import { type TwoInstances, twoInstanceBackends } from './two-instance-backends';

/**
 * The identity store's contract, run against SQLite (a temp file) and PostgreSQL (a fresh database). Each case
 * gets two store instances on one database, as two gateways have, so the race cases meet for real: on PostgreSQL
 * two pools at READ COMMITTED, on SQLite two connections to one file. Rows of other domains (accounts, users,
 * machines, API tokens) are seeded with raw SQL (`?` placeholders on both).
 */
interface Pair {
  store: IdentityStore;
  /** The same database without the TOTP seed key (a tool that opens it only for tokens). */
  keyless: IdentityStore;
}

const IDENTITY_TABLES = [
  'user_passwords',
  'passkeys',
  'totp_secrets',
  'recovery_codes',
  'web_sessions',
  'auth_challenges',
  'setup_links',
  'invitations',
  'member_custom_roles',
  'custom_roles',
  'group_members',
  'group_machines',
  'groups',
];
const CORE_TABLES = ['audit_events', 'audit_chains', 'api_tokens', 'machines', 'memberships', 'users', 'accounts'];

const seeds = new TotpSeedCipher(randomBytes(32));
const backends = twoInstanceBackends<Pair>({
  sqlite: (core) => ({ store: new SqliteIdentityStore(core, seeds), keyless: new SqliteIdentityStore(core) }),
  postgres: (database) => ({ store: new PgIdentityStore(database, seeds), keyless: new PgIdentityStore(database) }),
  truncate: [...IDENTITY_TABLES, ...CORE_TABLES],
});

const T0 = Date.UTC(2026, 0, 1);
const at = (ms = 0) => new Date(T0 + ms).toISOString();
const ACCOUNT = 'acc_1';
const OWNER = 'usr_owner';
const SECOND = 'usr_second';
const MEMBER = 'usr_member';

function event(action: string, target: string | null = null): AuditEventInput {
  return { accountId: ACCOUNT, at: at(), actor: `user:${OWNER}`, action, target, outcome: 'ok' };
}

function passkey(idValue: string, userId: string, over: Partial<StoredPasskey> = {}): StoredPasskey {
  return {
    id: idValue,
    userId,
    name: 'Laptop',
    publicKey: 'pk',
    counter: 0,
    transports: ['internal', 'hybrid'],
    backedUp: true,
    createdAt: at(),
    lastUsedAt: null,
    ...over,
  };
}

function session(idValue: string, userId: string, over: Partial<WebSession> = {}): WebSession & { tokenHash: string } {
  return {
    id: idValue,
    tokenHash: `hash-${idValue}`,
    userId,
    accountId: ACCOUNT,
    csrfToken: `csrf-${idValue}`,
    method: 'passkey',
    userAgent: 'test',
    createdAt: at(),
    lastSeenAt: at(),
    expiresAt: at(86_400_000),
    revokedAt: null,
    ...over,
  };
}

const password = (step = 100) => ({
  passwordHash: '$argon2id$fake',
  totpSecret: 'JBSWY3DPEHPK3PXP',
  totpStep: step,
  recoveryCodeHashes: ['rc1', 'rc2', 'rc3'],
});

const n = (v: unknown) => Number(v);

describe.each(backends)('identity store on $name', (backend) => {
  let s: TwoInstances<Pair>;
  let a: IdentityStore;
  let b: IdentityStore;
  let keyless: IdentityStore;

  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    s = await backend.open();
    a = s.a.store;
    b = s.b.store;
    keyless = s.b.keyless;
    await s.exec('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', [ACCOUNT, 'Acme', at()]);
    await s.exec('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', ['acc_2', 'Other', at()]);
    for (const [i, [user, role]] of [
      [OWNER, 'owner'],
      [SECOND, 'owner'],
      [MEMBER, 'member'],
    ].entries()) {
      await s.exec('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, ?, ?)', [
        user,
        user,
        `${user}@Letkite.Test`,
        at(),
      ]);
      await s.exec('INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, ?, ?)', [
        ACCOUNT,
        user,
        role,
        at(i),
      ]);
    }
    for (const m of ['mch_1', 'mch_2']) {
      await s.exec(
        'INSERT INTO machines (id, account_id, name, public_key, labels, enrolled_at) VALUES (?, ?, ?, ?, ?, ?)',
        [m, ACCOUNT, m, 'key', '[]', at()],
      );
    }
  });
  afterEach(() => backend.close());

  const auditCount = async (action: string) =>
    n((await s.rows<{ n: unknown }>('SELECT count(*) AS n FROM audit_events WHERE action = ?', [action]))[0]?.n);
  const owners = async () =>
    n(
      (
        await s.rows<{ n: unknown }>("SELECT count(*) AS n FROM memberships WHERE account_id = ? AND role = 'owner'", [
          ACCOUNT,
        ])
      )[0]?.n,
    );

  describe('users and accounts', () => {
    test('an account and a user by e-mail whatever its case; unknown ones are null', async () => {
      expect(await a.getAccount(ACCOUNT)).toEqual({ id: ACCOUNT, name: 'Acme', createdAt: at() });
      expect(await a.getAccount('acc_none')).toBeNull();
      expect((await a.findUserByEmail('USR_MEMBER@letkite.test'))?.id).toBe(MEMBER);
      expect(await a.findUserByEmail('nobody@letkite.test')).toBeNull();
    });

    test('updating a user changes name and e-mail and writes its audit row', async () => {
      await a.updateUser(MEMBER, { name: 'Mia', email: 'mia@letkite.test' }, event('user.update', MEMBER));
      expect(await b.findUserByEmail('mia@letkite.test')).toMatchObject({ id: MEMBER, name: 'Mia' });
      expect(await auditCount('user.update')).toBe(1);
    });
  });

  describe('members and roles', () => {
    test('memberships and the member list carry the custom role and which credentials each has', async () => {
      await a.saveCustomRole(
        { id: 'crl_1', accountId: ACCOUNT, name: 'Approver', permissions: ['approvals.decide'], createdAt: at() },
        event('role.save'),
      );
      await a.setMemberRole(ACCOUNT, MEMBER, 'member', 'crl_1', event('member.role', MEMBER));
      await a.addPasskey(passkey('pk_1', MEMBER), event('passkey.add'));
      await a.setPasswordAndTotp(SECOND, password(), at(), event('password.set'));

      expect(await b.membershipsOf(MEMBER)).toEqual([
        {
          accountId: ACCOUNT,
          accountName: 'Acme',
          userId: MEMBER,
          role: 'member',
          customRole: {
            id: 'crl_1',
            accountId: ACCOUNT,
            name: 'Approver',
            permissions: ['approvals.decide'],
            createdAt: at(),
          },
        },
      ]);
      expect((await b.membership(ACCOUNT, OWNER))?.customRole).toBeNull();
      expect(await b.membership('acc_2', OWNER)).toBeNull();
      const members = await b.listMembers(ACCOUNT);
      expect(members.map((m) => [m.user.id, m.role, m.customRole?.id ?? null, m.hasPasskey, m.hasPassword])).toEqual([
        [OWNER, 'owner', null, false, false],
        [SECOND, 'owner', null, false, true],
        [MEMBER, 'member', 'crl_1', true, false],
      ]);
      expect(members[0]?.createdAt).toBe(at(0));
      expect(await b.countOwners(ACCOUNT)).toBe(2);
    });

    test('changing a role replaces the custom role; null clears it', async () => {
      for (const r of ['crl_1', 'crl_2']) {
        await a.saveCustomRole(
          { id: r, accountId: ACCOUNT, name: r, permissions: [], createdAt: at() },
          event('role.save'),
        );
      }
      await a.setMemberRole(ACCOUNT, MEMBER, 'member', 'crl_1', event('member.role'));
      await b.setMemberRole(ACCOUNT, MEMBER, 'admin', 'crl_2', event('member.role'));
      expect(await a.membership(ACCOUNT, MEMBER)).toMatchObject({ role: 'admin', customRole: { id: 'crl_2' } });
      await a.setMemberRole(ACCOUNT, MEMBER, 'member', null, event('member.role'));
      expect((await b.membership(ACCOUNT, MEMBER))?.customRole).toBeNull();
      expect(await auditCount('member.role')).toBe(3);
    });

    test('the last owner can be neither demoted nor removed (conflict), and nothing of the refusal is kept', async () => {
      await a.setMemberRole(ACCOUNT, SECOND, 'admin', null, event('member.role'));
      await expect(a.setMemberRole(ACCOUNT, OWNER, 'admin', null, event('member.role'))).rejects.toMatchObject({
        code: 'conflict',
      });
      await expect(b.removeMember(ACCOUNT, OWNER, at(), event('member.remove'))).rejects.toMatchObject({
        code: 'conflict',
      });
      expect(await owners()).toBe(1);
      expect(await auditCount('member.role')).toBe(1);
      expect(await auditCount('member.remove')).toBe(0);
      // Promoting back is always allowed, and demoting a non-owner needs no other owner.
      await b.setMemberRole(ACCOUNT, SECOND, 'owner', null, event('member.role'));
      await b.setMemberRole(ACCOUNT, MEMBER, 'admin', null, event('member.role'));
      expect(await owners()).toBe(2);
    });

    test('removing a member drops their custom role, groups, sessions and API tokens in that account only', async () => {
      await a.saveCustomRole(
        { id: 'crl_1', accountId: ACCOUNT, name: 'R', permissions: [], createdAt: at() },
        event('role.save'),
      );
      await a.setMemberRole(ACCOUNT, MEMBER, 'member', 'crl_1', event('member.role'));
      await a.saveGroup(
        { id: 'grp_1', accountId: ACCOUNT, name: 'Ops', createdAt: at(), memberIds: [MEMBER, OWNER], machineIds: [] },
        event('group.save'),
      );
      await a.createSession(session('ses_1', MEMBER), event('session.create'));
      await s.exec('INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, ?, ?)', [
        'acc_2',
        MEMBER,
        'member',
        at(),
      ]);
      await a.createSession(session('ses_2', MEMBER, { accountId: 'acc_2' }), event('session.create'));
      for (const [tok, acc] of [
        ['tok_1', ACCOUNT],
        ['tok_2', 'acc_2'],
      ]) {
        await s.exec(
          'INSERT INTO api_tokens (id, account_id, user_id, name, token_hash, "grant", created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
          [tok, acc, MEMBER, tok, `h-${tok}`, '{}', at()],
        );
      }

      await b.removeMember(ACCOUNT, MEMBER, at(5), event('member.remove', MEMBER));

      expect(await a.membership(ACCOUNT, MEMBER)).toBeNull();
      expect(await a.membership('acc_2', MEMBER)).not.toBeNull();
      expect((await a.getGroup(ACCOUNT, 'grp_1'))?.memberIds).toEqual([OWNER]);
      expect((await a.listSessions(MEMBER)).map((x) => x.id)).toEqual(['ses_2']);
      const tokens = await a.listApiTokens(ACCOUNT, MEMBER);
      expect(tokens.map((t) => [t.id, t.revokedAt])).toEqual([['tok_1', at(5)]]);
      expect((await a.listApiTokens('acc_2', null))[0]?.revokedAt).toBeNull();
      expect(await s.rows('SELECT * FROM member_custom_roles')).toEqual([]);
      expect(await auditCount('member.remove')).toBe(1);
    });
  });

  describe('passkeys', () => {
    test('added, listed, read back with transports and backed-up flag; deleted only by their owner', async () => {
      await a.addPasskey(passkey('pk_1', MEMBER), event('passkey.add'));
      await a.addPasskey(passkey('pk_2', MEMBER, { backedUp: false, createdAt: at(1) }), event('passkey.add'));
      expect(await b.getPasskey('pk_1')).toEqual(passkey('pk_1', MEMBER));
      expect((await b.listPasskeys(MEMBER)).map((k) => [k.id, k.backedUp])).toEqual([
        ['pk_1', true],
        ['pk_2', false],
      ]);
      expect(await b.getPasskey('pk_none')).toBeNull();
      expect(await b.deletePasskey(OWNER, 'pk_1', event('passkey.delete'))).toBe(false);
      expect(await b.deletePasskey(MEMBER, 'pk_1', event('passkey.delete'))).toBe(true);
      expect(await a.deletePasskey(MEMBER, 'pk_1', event('passkey.delete'))).toBe(false);
      expect(await auditCount('passkey.delete')).toBe(1);
      expect((await a.credentialSummary(MEMBER)).passkeys).toBe(1);
    });

    test('a use is recorded only when the counter moves forward (or stays 0 for counterless authenticators)', async () => {
      await a.addPasskey(passkey('pk_0', MEMBER), event('passkey.add'));
      await a.addPasskey(passkey('pk_c', MEMBER, { counter: 5 }), event('passkey.add'));
      expect(await a.recordPasskeyUse('pk_0', 0, at(1))).toBe(true);
      expect((await b.getPasskey('pk_0'))?.lastUsedAt).toBe(at(1));
      expect(await a.recordPasskeyUse('pk_c', 5, at(2))).toBe(false);
      expect(await a.recordPasskeyUse('pk_c', 4, at(2))).toBe(false);
      expect(await a.recordPasskeyUse('pk_c', 0, at(2))).toBe(false);
      expect(await a.recordPasskeyUse('pk_c', 6, at(3))).toBe(true);
      expect(await b.getPasskey('pk_c')).toMatchObject({ counter: 6, lastUsedAt: at(3) });
      expect(await a.recordPasskeyUse('pk_none', 1, at())).toBe(false);
    });

    test('of concurrent uses with one counter value exactly one is recorded', async () => {
      await a.addPasskey(passkey('pk_c', MEMBER, { counter: 1 }), event('passkey.add'));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).recordPasskeyUse('pk_c', 2, at())),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('password, TOTP and recovery codes', () => {
    test('set together, read back (the seed sealed at rest), replaced, and removed together', async () => {
      await a.setPasswordAndTotp(MEMBER, password(100), at(), event('password.set'));
      expect(await b.getPassword(MEMBER)).toEqual({ userId: MEMBER, passwordHash: '$argon2id$fake' });
      expect(await b.getTotp(MEMBER)).toEqual({ userId: MEMBER, secret: 'JBSWY3DPEHPK3PXP', lastStep: 100 });
      const [raw] = await s.rows<{ secret: string }>('SELECT secret FROM totp_secrets WHERE user_id = ?', [MEMBER]);
      expect(TotpSeedCipher.isSealed(raw?.secret ?? '')).toBe(true);
      expect(raw?.secret).not.toContain('JBSWY3DPEHPK3PXP');
      expect(await b.credentialSummary(MEMBER)).toEqual({
        passkeys: 0,
        password: true,
        totp: true,
        recoveryCodesLeft: 3,
      });

      await b.setPasswordAndTotp(
        MEMBER,
        { ...password(7), passwordHash: 'h2', recoveryCodeHashes: ['x'] },
        at(1),
        event('password.set'),
      );
      expect((await a.getPassword(MEMBER))?.passwordHash).toBe('h2');
      expect((await a.getTotp(MEMBER))?.lastStep).toBe(7);
      expect((await a.credentialSummary(MEMBER)).recoveryCodesLeft).toBe(1);

      await a.removePasswordAndTotp(MEMBER, event('password.remove'));
      expect(await b.getPassword(MEMBER)).toBeNull();
      expect(await b.getTotp(MEMBER)).toBeNull();
      expect(await b.credentialSummary(MEMBER)).toEqual({
        passkeys: 0,
        password: false,
        totp: false,
        recoveryCodesLeft: 0,
      });
      expect(await auditCount('password.set')).toBe(2);
      expect(await auditCount('password.remove')).toBe(1);
    });

    test('a store without the seed key can neither write nor read a TOTP seed', async () => {
      await expect(keyless.setPasswordAndTotp(MEMBER, password(), at(), event('password.set'))).rejects.toMatchObject({
        code: 'internal',
      });
      await a.setPasswordAndTotp(MEMBER, password(), at(), event('password.set'));
      await expect(keyless.getTotp(MEMBER)).rejects.toMatchObject({ code: 'internal' });
      // Not needing the seed, the rest still works.
      expect((await keyless.getPassword(MEMBER))?.passwordHash).toBe('$argon2id$fake');
    });

    test('a plaintext seed left by an older process is answered and sealed on first read', async () => {
      await s.exec('INSERT INTO totp_secrets (user_id, secret, last_step, created_at) VALUES (?, ?, NULL, ?)', [
        MEMBER,
        'JBSWY3DPEHPK3PXP',
        at(),
      ]);
      expect((await a.getTotp(MEMBER))?.secret).toBe('JBSWY3DPEHPK3PXP');
      const [raw] = await s.rows<{ secret: string }>('SELECT secret FROM totp_secrets WHERE user_id = ?', [MEMBER]);
      expect(TotpSeedCipher.isSealed(raw?.secret ?? '')).toBe(true);
      expect((await b.getTotp(MEMBER))?.secret).toBe('JBSWY3DPEHPK3PXP');
    });

    test('a TOTP step is used once and never one at or before the last used one', async () => {
      await a.setPasswordAndTotp(MEMBER, password(100), at(), event('password.set'));
      expect(await a.consumeTotpStep(MEMBER, 100)).toBe(false);
      expect(await a.consumeTotpStep(MEMBER, 99)).toBe(false);
      expect(await a.consumeTotpStep(MEMBER, 101)).toBe(true);
      expect(await b.consumeTotpStep(MEMBER, 101)).toBe(false);
      expect(await b.consumeTotpStep(MEMBER, 103)).toBe(true);
      expect(await a.consumeTotpStep(MEMBER, 102)).toBe(false);
      expect(await a.consumeTotpStep(OWNER, 500)).toBe(false);
    });

    test('a recovery code is used once; replacing the set brings new unused codes', async () => {
      await a.setPasswordAndTotp(MEMBER, password(), at(), event('password.set'));
      expect(await a.consumeRecoveryCode(MEMBER, 'rc2', at())).toBe(true);
      expect(await b.consumeRecoveryCode(MEMBER, 'rc2', at())).toBe(false);
      expect(await b.consumeRecoveryCode(MEMBER, 'nope', at())).toBe(false);
      expect(await b.consumeRecoveryCode(OWNER, 'rc1', at())).toBe(false);
      expect((await a.credentialSummary(MEMBER)).recoveryCodesLeft).toBe(2);
      await b.replaceRecoveryCodes(MEMBER, ['n1', 'n2', 'n3', 'n4'], event('recovery_codes.replace'));
      expect((await a.credentialSummary(MEMBER)).recoveryCodesLeft).toBe(4);
      expect(await a.consumeRecoveryCode(MEMBER, 'rc1', at())).toBe(false);
      expect(await a.consumeRecoveryCode(MEMBER, 'n4', at())).toBe(true);
      await a.replaceRecoveryCodes(MEMBER, [], event('recovery_codes.replace'));
      expect((await a.credentialSummary(MEMBER)).recoveryCodesLeft).toBe(0);
      expect(await auditCount('recovery_codes.replace')).toBe(2);
    });

    test('10 concurrent uses of one TOTP step through two gateways: exactly one wins', async () => {
      await a.setPasswordAndTotp(MEMBER, password(100), at(), event('password.set'));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).consumeTotpStep(MEMBER, 101)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await a.getTotp(MEMBER))?.lastStep).toBe(101);
    });

    test('10 concurrent uses of one recovery code through two gateways: exactly one wins', async () => {
      await a.setPasswordAndTotp(MEMBER, password(), at(), event('password.set'));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).consumeRecoveryCode(MEMBER, 'rc1', at())),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await a.credentialSummary(MEMBER)).recoveryCodesLeft).toBe(2);
    });
  });

  describe('web sessions', () => {
    test('created, found by token hash, touched, switched, listed while live, revoked once', async () => {
      await a.createSession(session('ses_1', MEMBER), event('session.create'));
      await a.createSession(session('ses_2', MEMBER, { createdAt: at(1), method: 'recovery_code' }), event('x'));
      const { tokenHash: _h, ...view } = session('ses_1', MEMBER);
      expect(await b.findSessionByTokenHash('hash-ses_1')).toEqual(view);
      expect(await b.findSessionByTokenHash('hash-none')).toBeNull();
      await b.touchSession('ses_1', at(60_000));
      await b.switchSessionAccount('ses_1', 'acc_2');
      expect(await a.findSessionByTokenHash('hash-ses_1')).toMatchObject({
        lastSeenAt: at(60_000),
        accountId: 'acc_2',
      });
      expect((await a.listSessions(MEMBER)).map((x) => [x.id, x.method])).toEqual([
        ['ses_1', 'passkey'],
        ['ses_2', 'recovery_code'],
      ]);
      expect(await a.revokeSession('ses_1', at(5), event('session.revoke'))).toBe(true);
      expect(await b.revokeSession('ses_1', at(6), event('session.revoke'))).toBe(false);
      expect(await b.revokeSession('ses_2', at(6), null)).toBe(true);
      expect((await a.findSessionByTokenHash('hash-ses_1'))?.revokedAt).toBe(at(5));
      expect(await a.listSessions(MEMBER)).toEqual([]);
      expect(await auditCount('session.revoke')).toBe(1);
    });

    test('a token hash names one session: a second with the same hash is refused', async () => {
      await a.createSession(session('ses_1', MEMBER), event('session.create'));
      await expect(
        b.createSession({ ...session('ses_2', OWNER), tokenHash: 'hash-ses_1' }, event('session.create')),
      ).rejects.toThrow();
      expect(await auditCount('session.create')).toBe(1);
    });
  });

  describe('challenges', () => {
    const challenge = (idValue: string, over: Record<string, string> = {}) => ({
      id: idValue,
      purpose: 'webauthn-register',
      subject: MEMBER,
      value: 'challenge-value',
      createdAt: at(),
      expiresAt: at(60_000),
      ...over,
    });
    const view = (c: ReturnType<typeof challenge>) => ({
      id: c.id,
      purpose: c.purpose,
      subject: c.subject,
      value: c.value,
      expiresAt: c.expiresAt,
    });

    test('peeked without being used, taken once, and only for its purpose and subject before it expires', async () => {
      const c = challenge('chl_1');
      await a.putChallenge(c);
      expect(await b.peekChallenge('chl_1', c.purpose, MEMBER, at(1))).toEqual(view(c));
      expect(await b.peekChallenge('chl_1', c.purpose, MEMBER, at(1))).toEqual(view(c));
      expect(await b.takeChallenge('chl_1', 'other-purpose', MEMBER, at(1))).toBeNull();
      expect(await b.takeChallenge('chl_1', c.purpose, OWNER, at(1))).toBeNull();
      expect(await b.takeChallenge('chl_1', c.purpose, MEMBER, at(60_000))).toBeNull();
      expect(await b.takeChallenge('chl_1', c.purpose, MEMBER, at(1))).toEqual(view(c));
      expect(await a.takeChallenge('chl_1', c.purpose, MEMBER, at(1))).toBeNull();
      expect(await a.peekChallenge('chl_1', c.purpose, MEMBER, at(1))).toBeNull();
      expect(await a.takeChallenge('chl_none', c.purpose, MEMBER, at(1))).toBeNull();
    });

    test('a pending TOTP secret is sealed at rest and opened when read', async () => {
      const c = challenge('chl_totp', { purpose: 'totp-setup', value: 'JBSWY3DPEHPK3PXP' });
      await a.putChallenge(c);
      const [raw] = await s.rows<{ value: string }>('SELECT value FROM auth_challenges WHERE id = ?', ['chl_totp']);
      expect(TotpSeedCipher.isSealed(raw?.value ?? '')).toBe(true);
      expect(await b.peekChallenge('chl_totp', 'totp-setup', MEMBER, at(1))).toEqual(view(c));
      expect(await b.takeChallenge('chl_totp', 'totp-setup', MEMBER, at(1))).toEqual(view(c));
    });

    test('writing a challenge sweeps the expired ones', async () => {
      await a.putChallenge(challenge('chl_old', { expiresAt: at(10) }));
      await a.putChallenge(challenge('chl_live'));
      await b.putChallenge(challenge('chl_new', { createdAt: at(1000) }));
      const ids = (await s.rows<{ id: string }>('SELECT id FROM auth_challenges ORDER BY id')).map((r) => r.id);
      expect(ids).toEqual(['chl_live', 'chl_new']);
    });

    test('10 concurrent takes of one challenge through two gateways: exactly one gets it', async () => {
      await a.putChallenge(challenge('chl_1'));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? a : b).takeChallenge('chl_1', 'webauthn-register', MEMBER, at(1)),
        ),
      );
      expect(results.filter((r) => r !== null)).toHaveLength(1);
    });
  });

  describe('setup links and invitations', () => {
    const link = (idValue: string, over: Record<string, string> = {}) => ({
      id: idValue,
      accountId: ACCOUNT,
      userId: OWNER,
      tokenHash: `h-${idValue}`,
      createdAt: at(),
      expiresAt: at(1_800_000),
      usedAt: null,
      ...over,
    });
    const invitation = (idValue: string, over: Record<string, unknown> = {}) => ({
      id: idValue,
      accountId: ACCOUNT,
      email: 'new@letkite.test',
      role: 'member' as const,
      customRoleId: null,
      invitedBy: OWNER,
      tokenHash: `h-${idValue}`,
      createdAt: at(),
      expiresAt: at(86_400_000),
      acceptedAt: null,
      revokedAt: null,
      ...over,
    });
    const onboardInvitation = (invitationId: string, userId: string, sessionId: string): Onboarding => ({
      via: { kind: 'invitation', invitationId },
      user: { id: userId, name: 'New', email: 'new@letkite.test', createdAt: at(1) },
      existingUser: false,
      membership: { accountId: ACCOUNT, role: 'member', customRoleId: null },
      credentials: { password: password() },
      session: session(sessionId, userId, { createdAt: at(1), method: 'password_totp' }),
      audit: [event('invitation.accept'), event('session.create')],
    });
    const onboardSetup = (setupLinkId: string, sessionId: string, passkeyId: string): Onboarding => ({
      via: { kind: 'setup', setupLinkId },
      user: { id: OWNER, name: 'Olga', email: 'olga@letkite.test', createdAt: at() },
      existingUser: true,
      membership: { accountId: ACCOUNT, role: 'owner', customRoleId: null },
      credentials: { passkey: passkey(passkeyId, OWNER) },
      session: session(sessionId, OWNER, { createdAt: at(1) }),
      audit: [event('setup_link.use')],
    });

    test('a new setup link retires the open one; found by hash; the database refuses a second open link', async () => {
      await a.createSetupLink(link('stl_1'), event('setup_link.create'));
      await b.createSetupLink(link('stl_2', { createdAt: at(5) }), event('setup_link.create'));
      const { tokenHash: _h, ...view } = link('stl_2', { createdAt: at(5) });
      expect(await a.findSetupLinkByHash('h-stl_2')).toEqual(view);
      expect((await a.findSetupLinkByHash('h-stl_1'))?.usedAt).toBe(at(5));
      expect(await a.findSetupLinkByHash('h-none')).toBeNull();
      await expect(
        s.exec(
          'INSERT INTO setup_links (id, account_id, user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
          ['stl_x', ACCOUNT, OWNER, 'h-x', at(), at()],
        ),
      ).rejects.toThrow();
      expect(await auditCount('setup_link.create')).toBe(2);
    });

    test('the owner setup link completes onboarding once: passkey, session and audit written together', async () => {
      await a.createSetupLink(link('stl_1'), event('setup_link.create'));
      expect(await b.completeOnboarding(onboardSetup('stl_1', 'ses_1', 'pk_1'))).toBe(true);
      expect(await a.completeOnboarding(onboardSetup('stl_1', 'ses_2', 'pk_2'))).toBe(false);
      expect((await a.findSetupLinkByHash('h-stl_1'))?.usedAt).toBe(at(1));
      expect((await a.listPasskeys(OWNER)).map((k) => k.id)).toEqual(['pk_1']);
      expect((await a.listSessions(OWNER)).map((x) => x.id)).toEqual(['ses_1']);
      expect(await a.findUserByEmail('olga@letkite.test')).toMatchObject({ id: OWNER, name: 'Olga' });
      expect(await auditCount('setup_link.use')).toBe(1);
    });

    test('an expired setup link completes nothing', async () => {
      await a.createSetupLink(link('stl_1', { expiresAt: at(1) }), event('setup_link.create'));
      expect(await a.completeOnboarding(onboardSetup('stl_1', 'ses_1', 'pk_1'))).toBe(false);
      expect(await a.listPasskeys(OWNER)).toEqual([]);
    });

    test('invitations: created, found, listed, revoked once; a revoked or expired one completes nothing', async () => {
      await a.createInvitation(invitation('inv_1'), event('invitation.create'));
      await a.createInvitation(invitation('inv_2', { createdAt: at(1), expiresAt: at(1) }), event('invitation.create'));
      const { tokenHash: _h, ...view } = invitation('inv_1');
      expect(await b.findInvitationByHash('h-inv_1')).toEqual(view);
      expect(await b.findInvitationByHash('h-none')).toBeNull();
      expect((await b.listInvitations(ACCOUNT)).map((i) => i.id)).toEqual(['inv_1', 'inv_2']);
      expect(await b.listInvitations('acc_2')).toEqual([]);
      expect(await b.completeOnboarding(onboardInvitation('inv_2', 'usr_new', 'ses_1'))).toBe(false);
      expect(await b.revokeInvitation('acc_2', 'inv_1', at(2), event('invitation.revoke'))).toBe(false);
      expect(await b.revokeInvitation(ACCOUNT, 'inv_1', at(2), event('invitation.revoke'))).toBe(true);
      expect(await a.revokeInvitation(ACCOUNT, 'inv_1', at(3), event('invitation.revoke'))).toBe(false);
      expect((await a.findInvitationByHash('h-inv_1'))?.revokedAt).toBe(at(2));
      expect(await a.completeOnboarding(onboardInvitation('inv_1', 'usr_new', 'ses_1'))).toBe(false);
      expect(await a.findUserByEmail('new@letkite.test')).toBeNull();
      expect(await auditCount('invitation.revoke')).toBe(1);
    });

    test('an accepted invitation creates the person with password, TOTP, codes, membership and session', async () => {
      await a.saveCustomRole(
        { id: 'crl_1', accountId: ACCOUNT, name: 'R', permissions: ['audit.read'], createdAt: at() },
        event('role.save'),
      );
      await a.createInvitation(invitation('inv_1', { customRoleId: 'crl_1' }), event('invitation.create'));
      const o = onboardInvitation('inv_1', 'usr_new', 'ses_1');
      o.membership.customRoleId = 'crl_1';
      expect(await b.completeOnboarding(o)).toBe(true);
      expect(await a.membership(ACCOUNT, 'usr_new')).toMatchObject({ role: 'member', customRole: { id: 'crl_1' } });
      expect(await a.credentialSummary('usr_new')).toEqual({
        passkeys: 0,
        password: true,
        totp: true,
        recoveryCodesLeft: 3,
      });
      expect((await a.getTotp('usr_new'))?.secret).toBe('JBSWY3DPEHPK3PXP');
      expect((await a.findSessionByTokenHash('hash-ses_1'))?.userId).toBe('usr_new');
      expect(await a.findInvitationByHash('h-inv_1')).toMatchObject({ acceptedAt: at(1) });
      expect(await a.revokeInvitation(ACCOUNT, 'inv_1', at(2), event('invitation.revoke'))).toBe(false);
      expect(await auditCount('invitation.accept')).toBe(1);
    });

    test('two redemptions of one invitation at once through two gateways: one person, one session', async () => {
      await a.createInvitation(invitation('inv_1'), event('invitation.create'));
      const results = await Promise.all([
        a.completeOnboarding(onboardInvitation('inv_1', 'usr_new_a', 'ses_a')),
        b.completeOnboarding(onboardInvitation('inv_1', 'usr_new_b', 'ses_b')),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const joined = await s.rows<{ user_id: string }>("SELECT user_id FROM memberships WHERE user_id LIKE 'usr_new%'");
      expect(joined).toHaveLength(1);
      expect(await s.rows("SELECT id FROM users WHERE id LIKE 'usr_new%'")).toHaveLength(1);
      expect(await s.rows("SELECT id FROM web_sessions WHERE id IN ('ses_a', 'ses_b')")).toHaveLength(1);
      expect(await auditCount('invitation.accept')).toBe(1);
    });

    test('two redemptions of one setup link at once through two gateways: one passkey, one session', async () => {
      await a.createSetupLink(link('stl_1'), event('setup_link.create'));
      const results = await Promise.all([
        a.completeOnboarding(onboardSetup('stl_1', 'ses_a', 'pk_a')),
        b.completeOnboarding(onboardSetup('stl_1', 'ses_b', 'pk_b')),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await a.listPasskeys(OWNER)).toHaveLength(1);
      expect(await a.listSessions(OWNER)).toHaveLength(1);
      expect(await auditCount('setup_link.use')).toBe(1);
    });

    const acceptAsMember = (invitationId: string, userId: string, sessionId: string, role: 'admin' | 'member') => {
      const o = onboardInvitation(invitationId, userId, sessionId);
      o.existingUser = true;
      o.user = { id: userId, name: userId, email: `${userId}@Letkite.Test`, createdAt: at() };
      o.membership.role = role;
      o.credentials = {};
      return o;
    };

    test('an invitation for someone already in the account is refused (conflict) and stays open; the role stays', async () => {
      await a.createInvitation(invitation('inv_1', { email: `${MEMBER}@letkite.test`, role: 'admin' }), event('i'));
      await expect(a.completeOnboarding(acceptAsMember('inv_1', MEMBER, 'ses_1', 'admin'))).rejects.toMatchObject({
        code: 'conflict',
      });
      expect((await b.membership(ACCOUNT, MEMBER))?.role).toBe('member');
      expect((await b.findInvitationByHash('h-inv_1'))?.acceptedAt).toBeNull();
      expect(await b.findSessionByTokenHash('hash-ses_1')).toBeNull();
      expect(await auditCount('invitation.accept')).toBe(0);
    });

    test('two invitations of one person accepted at once through two gateways: one joins, the other is refused', async () => {
      await s.exec('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, ?, ?)', [
        'usr_x',
        'usr_x',
        'usr_x@Letkite.Test',
        at(),
      ]);
      await a.createInvitation(invitation('inv_1', { email: 'usr_x@letkite.test', role: 'member' }), event('i'));
      await a.createInvitation(invitation('inv_2', { email: 'usr_x@letkite.test', role: 'admin' }), event('i'));
      const results = await Promise.allSettled([
        a.completeOnboarding(acceptAsMember('inv_1', 'usr_x', 'ses_a', 'member')),
        b.completeOnboarding(acceptAsMember('inv_2', 'usr_x', 'ses_b', 'admin')),
      ]);
      const joined = results.flatMap((r, i) => (r.status === 'fulfilled' && r.value ? [i] : []));
      expect(joined).toHaveLength(1);
      const refused = results.filter((r) => r.status === 'rejected');
      expect(refused.map((r) => (r.reason as { code?: string }).code)).toEqual(['conflict']);
      // The role is the winner's, not overwritten by the other invitation.
      expect((await a.membership(ACCOUNT, 'usr_x'))?.role).toBe(joined[0] === 0 ? 'member' : 'admin');
      const accepted = await s.rows(
        "SELECT id FROM invitations WHERE accepted_at IS NOT NULL AND id IN ('inv_1', 'inv_2')",
      );
      expect(accepted).toHaveLength(1);
      expect(await s.rows("SELECT id FROM web_sessions WHERE id IN ('ses_a', 'ses_b')")).toHaveLength(1);
      expect(await auditCount('invitation.accept')).toBe(1);
    });

    test('two gateways printing the owner setup link at once leave one live link', async () => {
      const now = new Date(T0);
      await Promise.all(
        [a, b].map((identity) =>
          createOwnerSetupLink({ identity, now, publicUrl: 'http://x' }, { accountId: ACCOUNT, ownerId: OWNER }),
        ),
      );
      const open = await s.rows<{ n: unknown }>(
        'SELECT count(*) AS n FROM setup_links WHERE account_id = ? AND used_at IS NULL',
        [ACCOUNT],
      );
      expect(n(open[0]?.n)).toBe(1);
      expect(await auditCount('setup_link.create')).toBe(2);
    });
  });

  describe('custom roles', () => {
    test('saved, renamed by saving again, listed by name; deleting clears assignments and open invitations', async () => {
      await a.saveCustomRole(
        { id: 'crl_b', accountId: ACCOUNT, name: 'B', permissions: ['audit.read'], createdAt: at() },
        event('role.save'),
      );
      await a.saveCustomRole(
        { id: 'crl_a', accountId: ACCOUNT, name: 'Z', permissions: [], createdAt: at() },
        event('role.save'),
      );
      await b.saveCustomRole(
        { id: 'crl_a', accountId: ACCOUNT, name: 'A', permissions: ['approvals.decide'], createdAt: at() },
        event('role.save'),
      );
      expect((await a.listCustomRoles(ACCOUNT)).map((r) => [r.id, r.name, r.permissions])).toEqual([
        ['crl_a', 'A', ['approvals.decide']],
        ['crl_b', 'B', ['audit.read']],
      ]);
      expect(await a.getCustomRole('acc_2', 'crl_a')).toBeNull();
      await a.setMemberRole(ACCOUNT, MEMBER, 'member', 'crl_a', event('member.role'));
      await a.createInvitation(
        {
          id: 'inv_1',
          accountId: ACCOUNT,
          email: 'x@letkite.test',
          role: 'member',
          customRoleId: 'crl_a',
          invitedBy: OWNER,
          tokenHash: 'h-inv',
          createdAt: at(),
          expiresAt: at(86_400_000),
          acceptedAt: null,
          revokedAt: null,
        },
        event('invitation.create'),
      );
      expect(await b.deleteCustomRole('acc_2', 'crl_a', event('role.delete'))).toBe(false);
      // Refused for another account, it leaves this account's invitations and assignments alone.
      expect((await a.findInvitationByHash('h-inv'))?.revokedAt).toBeNull();
      expect((await a.membership(ACCOUNT, MEMBER))?.customRole?.id).toBe('crl_a');
      expect(await b.deleteCustomRole(ACCOUNT, 'crl_a', { ...event('role.delete'), at: at(9) })).toBe(true);
      expect(await b.deleteCustomRole(ACCOUNT, 'crl_a', event('role.delete'))).toBe(false);
      expect(await a.getCustomRole(ACCOUNT, 'crl_a')).toBeNull();
      expect((await a.membership(ACCOUNT, MEMBER))?.customRole).toBeNull();
      expect((await a.findInvitationByHash('h-inv'))?.revokedAt).toBe(at(9));
      expect(await auditCount('role.delete')).toBe(1);
    });

    test('two roles of one account cannot share a name', async () => {
      await a.saveCustomRole(
        { id: 'crl_1', accountId: ACCOUNT, name: 'Same', permissions: [], createdAt: at() },
        event('role.save'),
      );
      await expect(
        b.saveCustomRole(
          { id: 'crl_2', accountId: ACCOUNT, name: 'Same', permissions: [], createdAt: at() },
          event('role.save'),
        ),
      ).rejects.toThrow();
      expect(await auditCount('role.save')).toBe(1);
    });
  });

  describe('groups', () => {
    const group = (idValue: string, name: string, memberIds: string[], machineIds: string[]) => ({
      id: idValue,
      accountId: ACCOUNT,
      name,
      createdAt: at(),
      memberIds,
      machineIds,
    });

    test('saved with members and claimed machines, replaced, listed by name, and deleted', async () => {
      await a.saveGroup(group('grp_2', 'Ops', [MEMBER, MEMBER], ['mch_1']), event('group.save'));
      await a.saveGroup(group('grp_1', 'Dev', [OWNER], ['mch_1', 'mch_2']), event('group.save'));
      expect(await b.listGroups(ACCOUNT)).toEqual([
        group('grp_1', 'Dev', [OWNER], ['mch_1', 'mch_2']),
        group('grp_2', 'Ops', [MEMBER], ['mch_1']),
      ]);
      expect(await b.getGroup(ACCOUNT, 'grp_2')).toEqual(group('grp_2', 'Ops', [MEMBER], ['mch_1']));
      expect(await b.getGroup('acc_2', 'grp_2')).toBeNull();
      expect(await b.listGroups('acc_2')).toEqual([]);
      const claims = await b.machineClaims(ACCOUNT);
      expect(Object.fromEntries([...claims].map(([m, g]) => [m, [...g].sort()]))).toEqual({
        mch_1: ['grp_1', 'grp_2'],
        mch_2: ['grp_1'],
      });
      expect(await b.groupsOfUser(ACCOUNT, MEMBER)).toEqual(['grp_2']);

      await b.saveGroup(group('grp_2', 'Operations', [SECOND], []), event('group.save'));
      expect(await a.getGroup(ACCOUNT, 'grp_2')).toEqual(group('grp_2', 'Operations', [SECOND], []));
      expect(await a.groupsOfUser(ACCOUNT, MEMBER)).toEqual([]);

      expect(await a.deleteGroup(ACCOUNT, 'grp_1', event('group.delete'))).toBe(true);
      expect(await b.deleteGroup(ACCOUNT, 'grp_1', event('group.delete'))).toBe(false);
      expect((await a.listGroups(ACCOUNT)).map((g) => g.id)).toEqual(['grp_2']);
      expect((await a.machineClaims(ACCOUNT)).size).toBe(0);
      expect(await auditCount('group.delete')).toBe(1);
    });

    test("deleting another account's group is refused and leaves its members and claims", async () => {
      await a.saveGroup(group('grp_1', 'Dev', [OWNER], ['mch_1']), event('group.save'));
      expect(await b.deleteGroup('acc_2', 'grp_1', event('group.delete'))).toBe(false);
      expect(await a.getGroup(ACCOUNT, 'grp_1')).toEqual(group('grp_1', 'Dev', [OWNER], ['mch_1']));
    });

    test('concurrent saves of one group through two gateways each replace it whole', async () => {
      const sets = [[OWNER, SECOND], [MEMBER], [SECOND, MEMBER], [OWNER]];
      await Promise.all(
        sets.map((members, i) =>
          (i % 2 ? a : b).saveGroup(group('grp_1', 'Ops', members, i % 2 ? ['mch_1'] : []), event('group.save')),
        ),
      );
      const saved = await a.getGroup(ACCOUNT, 'grp_1');
      const i = sets.findIndex((m) => [...m].sort().join() === [...(saved?.memberIds ?? [])].sort().join());
      expect(i).toBeGreaterThanOrEqual(0);
      expect(saved?.machineIds).toEqual(i % 2 ? ['mch_1'] : []);
      expect(await auditCount('group.save')).toBe(4);
    });
  });

  describe('API tokens', () => {
    test("listed for the account or one person, and revoked once within the token's account", async () => {
      for (const [tok, user, t] of [
        ['tok_1', MEMBER, 1],
        ['tok_2', OWNER, 2],
      ] as const) {
        await s.exec(
          'INSERT INTO api_tokens (id, account_id, user_id, name, token_hash, "grant", created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          [tok, ACCOUNT, user, tok, `h-${tok}`, '{"policy":"read-only","machines":"all"}', at(t), at(t + 1)],
        );
      }
      expect(await a.listApiTokens(ACCOUNT, null)).toEqual([
        {
          id: 'tok_1',
          accountId: ACCOUNT,
          userId: MEMBER,
          name: 'tok_1',
          grant: { policy: 'read-only', machines: 'all' },
          createdAt: at(1),
          expiresAt: null,
          revokedAt: null,
          lastUsedAt: at(2),
        },
        expect.objectContaining({ id: 'tok_2' }),
      ]);
      expect((await a.listApiTokens(ACCOUNT, OWNER)).map((t) => t.id)).toEqual(['tok_2']);
      expect(await b.revokeApiToken('acc_2', 'tok_1', at(3), event('token.revoke'))).toBe(false);
      expect(await b.revokeApiToken(ACCOUNT, 'tok_1', at(3), event('token.revoke'))).toBe(true);
      expect(await a.revokeApiToken(ACCOUNT, 'tok_1', at(4), event('token.revoke'))).toBe(false);
      expect((await a.listApiTokens(ACCOUNT, MEMBER))[0]?.revokedAt).toBe(at(3));
      expect(await auditCount('token.revoke')).toBe(1);
    });
  });

  describe('keeping an owner under concurrency', () => {
    test('the last two owners demoted at once through two gateways: one demotion is refused', async () => {
      const results = await Promise.allSettled([
        a.setMemberRole(ACCOUNT, SECOND, 'member', null, event('member.role')),
        b.setMemberRole(ACCOUNT, OWNER, 'member', null, event('member.role')),
      ]);
      expect(await owners()).toBe(1);
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(refused.map((r) => (r.reason as { code?: string }).code)).toEqual(['conflict']);
      expect(await auditCount('member.role')).toBe(1);
    });

    test('the last two owners removed at once through two gateways: one removal is refused', async () => {
      const results = await Promise.allSettled([
        a.removeMember(ACCOUNT, SECOND, at(), event('member.remove')),
        b.removeMember(ACCOUNT, OWNER, at(), event('member.remove')),
      ]);
      expect(await owners()).toBe(1);
      expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    });

    test('a demotion and a removal of the last two owners at once leave one owner', async () => {
      await Promise.allSettled([
        a.setMemberRole(ACCOUNT, OWNER, 'admin', null, event('member.role')),
        b.removeMember(ACCOUNT, SECOND, at(), event('member.remove')),
      ]);
      expect(await owners()).toBe(1);
    });

    test('ten demotions of three owners at once leave exactly one', async () => {
      await s.exec("UPDATE memberships SET role = 'owner' WHERE user_id = ?", [MEMBER]);
      const users = [OWNER, SECOND, MEMBER];
      await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? a : b).setMemberRole(ACCOUNT, users[i % 3] as string, 'admin', null, event('member.role')),
        ),
      );
      expect(await owners()).toBe(1);
    });
  });
});
