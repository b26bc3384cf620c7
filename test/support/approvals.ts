import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { Secret, TOTP } from 'otpauth';
import { SMTPServer } from 'smtp-server';
import { createApiToken } from '../../apps/gateway/src/auth/create-api-token';
import { loadOrCreateSecretKeyFile, TotpSeedCipher } from '../../apps/gateway/src/identity/totp-seed-cipher';
import { SqliteIdentityStore } from '../../apps/gateway/src/store/sqlite/sqlite-identity-store';
import { SqliteStore } from '../../apps/gateway/src/store/sqlite/sqlite-store';
import type { Grant } from '../../apps/gateway/src/store/types';
import type { TestGateway } from './letkite';
import { waitFor } from './processes';

/** One e-mail the local SMTP server received. */
export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
}

/** A local smtp-server on 127.0.0.1 that parses every message it receives (TESTING.md, "E-mail"). */
export class TestMailbox {
  readonly mails: ReceivedMail[] = [];
  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<TestMailbox> {
    let box: TestMailbox | null = null;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            box?.mails.push({
              to: session.envelope.rcptTo.map((r) => r.address),
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
            });
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    box = new TestMailbox(server, (server as unknown as { server: { address(): AddressInfo } }).server.address().port);
    return box;
  }

  /** The gateway environment that sends through this mailbox. */
  get env(): Record<string, string> {
    return {
      LETKITE_SMTP_URL: `smtp://127.0.0.1:${this.port}?ignoreTLS=true`,
      LETKITE_MAIL_FROM: 'LetKite <gw@letkite.test>',
    };
  }

  async waitForMail(match: (m: ReceivedMail) => boolean, what: string): Promise<ReceivedMail> {
    return waitFor(`e-mail: ${what}`, () => this.mails.find(match));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A person in the test account, with a web session (cookie + CSRF token) and optionally a TOTP secret. */
export interface TestPerson {
  userId: string;
  name: string;
  email: string;
  cookie: string;
  csrf: string;
  totp: TOTP | null;
  /** The last TOTP time step this person used (see totpCode). */
  lastStep: number;
}

/**
 * Direct access to the gateway's database for what the identity flows would otherwise do through the web app
 * (members, sessions, TOTP enrolment) and for an admin editing a connection's policy. SQLite in WAL mode with a
 * busy timeout is shared safely with the running gateway.
 */
export class TestAccount {
  private constructor(
    readonly gw: TestGateway,
    readonly store: SqliteStore,
    readonly identity: SqliteIdentityStore,
    readonly accountId: string,
    readonly ownerId: string,
  ) {}

  static async open(gw: TestGateway): Promise<TestAccount> {
    const store = new SqliteStore(join(gw.dataDir, 'letkite.db'));
    const { account, owner } = await store.bootstrap(new Date().toISOString());
    // The gateway seals TOTP seeds with the key it keeps next to the database (it made it on start).
    const seeds = new TotpSeedCipher(loadOrCreateSecretKeyFile(join(gw.dataDir, 'secret.key')));
    return new TestAccount(gw, store, new SqliteIdentityStore(store, seeds), account.id, owner.id);
  }

  /** Adds a member (or, for `owner`, fills in the bootstrap owner) with a signed-in session and a TOTP secret. */
  async person(
    name: string,
    role: 'owner' | 'admin' | 'member',
    options: { permissions?: string[] } = {},
  ): Promise<TestPerson> {
    const now = new Date().toISOString();
    const email = `${name.toLowerCase()}@letkite.test`;
    let userId = this.ownerId;
    if (role === 'owner') {
      this.store.sqlite.prepare('UPDATE users SET name = ?, email = ? WHERE id = ?').run(name, email, userId);
    } else {
      userId = `usr_${randomBytes(9).toString('hex')}`;
      this.store.sqlite
        .prepare('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, ?, ?)')
        .run(userId, name, email, now);
      this.store.sqlite
        .prepare('INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, ?, ?)')
        .run(this.accountId, userId, role, now);
    }
    if (options.permissions) {
      const roleId = `rol_${randomBytes(6).toString('hex')}`;
      await this.identity.saveCustomRole(
        {
          id: roleId,
          accountId: this.accountId,
          name: `${name}-role`,
          permissions: options.permissions,
          createdAt: now,
        },
        { accountId: this.accountId, at: now, actor: 'test', action: 'role.save' },
      );
      await this.identity.setMemberRole(this.accountId, userId, role, roleId, {
        accountId: this.accountId,
        at: now,
        actor: 'test',
        action: 'member.role',
      });
    }
    const secret = new Secret({ size: 20 });
    await this.identity.setPasswordAndTotp(
      userId,
      { passwordHash: 'unused-in-these-tests', totpSecret: secret.base32, totpStep: 0, recoveryCodeHashes: [] },
      now,
      { accountId: this.accountId, at: now, actor: 'test', action: 'totp.enable' },
    );
    const token = randomBytes(32).toString('base64url');
    const csrf = randomBytes(24).toString('base64url');
    await this.identity.createSession(
      {
        id: `ses_${randomBytes(9).toString('hex')}`,
        userId,
        accountId: this.accountId,
        csrfToken: csrf,
        method: 'password_totp',
        userAgent: 'test',
        createdAt: now,
        lastSeenAt: now,
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        revokedAt: null,
        tokenHash: createHash('sha256').update(token).digest('hex'),
      },
      { accountId: this.accountId, at: now, actor: 'test', action: 'session.create' },
    );
    return {
      userId,
      name,
      email,
      cookie: `letkite_session=${token}`,
      csrf,
      totp: new TOTP({ secret, period: 30, digits: 6, algorithm: 'SHA1' }),
      lastStep: 0,
    };
  }

  /** An API token of `person` whose grant uses `policy` (a policy document, as a connection would carry it). */
  async token(userId: string, policy: Record<string, unknown>): Promise<{ id: string; token: string }> {
    const grant: Grant = { policy, machines: '*', scopes: '*' };
    return createApiToken(
      { store: this.store, now: new Date() },
      { accountId: this.accountId, userId, name: `t-${randomBytes(3).toString('hex')}`, grant, actor: 'test' },
    );
  }

  /** What an admin editing the connection's policy does. */
  setPolicy(tokenId: string, policy: Record<string, unknown>): void {
    const grant: Grant = { policy, machines: '*', scopes: '*' };
    this.store.sqlite.prepare('UPDATE api_tokens SET "grant" = ? WHERE id = ?').run(JSON.stringify(grant), tokenId);
  }

  /** Moves a request's expiry into the past, as if its time had run out. */
  expireNow(approvalId: string): void {
    this.store.sqlite
      .prepare('UPDATE approval_requests SET expires_at = ? WHERE id = ?')
      .run(new Date(Date.now() - 1000).toISOString(), approvalId);
  }

  audit(action: string): { target: string | null }[] {
    return this.store.sqlite.prepare('SELECT target FROM audit_events WHERE action = ? ORDER BY id').all(action) as {
      target: string | null;
    }[];
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}

/** Calls the gateway's REST API as a signed-in person (session cookie, same-origin Origin, CSRF token). */
export async function asPerson(
  gw: TestGateway,
  person: TestPerson,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(new URL(path, gw.url), {
    method,
    headers: {
      cookie: person.cookie,
      origin: gw.url,
      'x-csrf-token': person.csrf,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * A TOTP code for a time step this person has not used yet. The gateway accepts each step once and only steps
 * after the last one used (±1 step of drift), so a person approving often waits for the clock.
 */
export async function totpCode(person: TestPerson): Promise<string> {
  const totp = person.totp;
  if (!totp) throw new Error(`${person.name} has no TOTP`);
  for (;;) {
    const current = Math.floor(Date.now() / 30_000);
    const step = Math.max(current, person.lastStep + 1);
    if (step <= current + 1) {
      person.lastStep = step;
      return totp.generate({ timestamp: step * 30_000 + 1_000 });
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
