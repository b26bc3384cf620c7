import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'nats';
import { Secret, TOTP } from 'otpauth';
import pg from 'pg';
import { openIdentityStore } from '../../apps/gateway/src/identity/open-identity-store';
import { openStore } from '../../apps/gateway/src/store/open-store';
import { createTestDatabase } from '../../apps/gateway/src/store/postgres/test-database';
import type { Store } from '../../apps/gateway/src/store/types';
import type { TestPerson } from './approvals';
import { tempDir } from './processes';

/** The real NATS of the machine (JetStream on), as .ci/run starts it. */
export const TEST_NATS_URL = process.env.LETKITE_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/**
 * What every gateway of one test cluster shares (docs/design/cluster.md): a fresh PostgreSQL database, a NATS prefix
 * of its own, one data directory (the identity key agents pin) and one TOTP sealing key. `env` goes to each
 * gateway (add LETKITE_GATEWAY_ID per gateway); `store` is the gateway's own store on that database, for what a
 * test sets up directly; `query` reads rows for assertions.
 */
export class TestCluster {
  private constructor(
    readonly db: { url: string; drop(): Promise<void> },
    readonly env: Record<string, string>,
    readonly secretKey: Buffer,
    readonly store: Store,
    private readonly pool: pg.Pool,
  ) {}

  static async create(prefix = 'letkite_cluster'): Promise<TestCluster> {
    const db = await createTestDatabase(prefix);
    const secretKey = randomBytes(32);
    const env = {
      LETKITE_DATABASE_URL: db.url,
      LETKITE_NATS_URL: TEST_NATS_URL,
      LETKITE_NATS_PREFIX: `lkc${randomBytes(4).toString('hex')}`,
      LETKITE_DATA: tempDir('cluster-data'),
      LETKITE_SECRET_KEY: secretKey.toString('hex'),
    };
    // The store applies the migrations (under the advisory lock the gateways take too).
    const store = await openStore(db.url);
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    // An idle client cut off by the server (the database dropped WITH (FORCE) at the end) must not surface as an
    // unhandled error of the test process; a query in flight still rejects where it was awaited.
    pool.on('error', () => {});
    return new TestCluster(db, env, secretKey, store, pool);
  }

  get dataDir(): string {
    return this.env.LETKITE_DATA as string;
  }

  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pool.query(sql, params)).rows as T[];
  }

  /** The owner with a fresh web session and a TOTP secret, written through the gateway's own stores. */
  async owner(): Promise<TestPerson & { accountId: string }> {
    const identity = openIdentityStore(this.store, { secretKey: this.secretKey });
    const { account, owner } = await this.store.bootstrap(new Date().toISOString());
    const now = new Date().toISOString();
    const audit = (action: string) => ({ accountId: account.id, at: now, actor: 'test', action });
    const secret = new Secret({ size: 20 });
    await identity.setPasswordAndTotp(
      owner.id,
      { passwordHash: 'unused-in-these-tests', totpSecret: secret.base32, totpStep: 0, recoveryCodeHashes: [] },
      now,
      audit('totp.enable'),
    );
    const token = randomBytes(32).toString('base64url');
    const csrf = randomBytes(24).toString('base64url');
    await identity.createSession(
      {
        id: `ses_${randomBytes(9).toString('hex')}`,
        userId: owner.id,
        accountId: account.id,
        csrfToken: csrf,
        method: 'password_totp',
        userAgent: 'test',
        createdAt: now,
        lastSeenAt: now,
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        revokedAt: null,
        tokenHash: createHash('sha256').update(token).digest('hex'),
      },
      audit('session.create'),
    );
    return {
      accountId: account.id,
      userId: owner.id,
      name: owner.name ?? 'owner',
      email: owner.email ?? 'owner@letkite.test',
      cookie: `letkite_session=${token}`,
      csrf,
      totp: new TOTP({ secret, period: 30, digits: 6, algorithm: 'SHA1' }),
      lastStep: 0,
    };
  }

  async dispose(): Promise<void> {
    await this.pool.end().catch(() => undefined);
    await this.store.close().catch(() => undefined);
    await this.db.drop();
    await this.dropNatsBuckets().catch(() => undefined);
  }

  /** The KV buckets the gateways made under this cluster's prefix (presence, registry, limiters, leases). */
  private async dropNatsBuckets(): Promise<void> {
    const nc = await connect({ servers: TEST_NATS_URL.replace(/^nats:\/\//, '') });
    try {
      const jsm = await nc.jetstreamManager();
      // The hub's buckets are `<prefix>-…`, coordination's `<prefix>_…`.
      const ours = [`KV_${this.env.LETKITE_NATS_PREFIX}-`, `KV_${this.env.LETKITE_NATS_PREFIX}_`];
      for await (const stream of jsm.streams.list()) {
        const name = stream.config.name;
        if (ours.some((p) => name.startsWith(p))) await jsm.streams.delete(name);
      }
    } finally {
      await nc.close();
    }
  }
}
