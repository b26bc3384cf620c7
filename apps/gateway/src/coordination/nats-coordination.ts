import { createHash, randomUUID } from 'node:crypto';
import { connect, type KV, type KvEntry, type NatsConnection, type Subscription } from 'nats';
import {
  assertCoordinationName,
  type Coordination,
  type CoordinationEvents,
  type EventPayload,
  type Lease,
  type Limiter,
  type LimiterOptions,
} from './coordination';
import { decideHit, type LimiterState, peekHit, stateLifetimeMs } from './limiter-rule';

/** Compare-and-set retries before a limiter or lease write gives up (only under extreme contention on one key). */
const MAX_CAS_TRIES = 100;

/** JetStream's "wrong last sequence": someone else wrote the key since we read it. */
function isCasConflict(err: unknown): boolean {
  return (err as { api_error?: { err_code?: number } })?.api_error?.err_code === 10071;
}

/** A KV key for any limiter key (an address, an e-mail …): hashed, so it is always a valid key and never a secret. */
function kvKey(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/**
 * Coordination for a cluster, over NATS (docs/design/coordination.md): events are core NATS subjects
 * `<prefix>.ev.<topic>`; each limiter is a JetStream KV bucket whose entries are decided by `decideHit` and written
 * with compare-and-set on the entry's revision (so concurrent hits on any gateways are each counted), expiring with
 * the bucket's TTL; leases are entries of one KV bucket holding the holder and its expiry, taken and renewed with
 * compare-and-set. `prefix` separates clusters (and test runs) sharing one NATS server.
 */
export class NatsCoordination implements Coordination {
  readonly events: CoordinationEvents;
  private readonly buckets = new Map<string, Promise<KV>>();
  private readonly subscriptions = new Set<Subscription>();
  private readonly heldLeases = new Set<Lease>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly log: (msg: string) => void,
  ) {
    const subject = (topic: string) => `${prefix}.ev.${topic}`;
    const subscriptions = this.subscriptions;
    this.events = {
      async publish(topic, payload = {}) {
        assertCoordinationName('topic', topic);
        nc.publish(subject(topic), JSON.stringify(payload));
      },
      subscribe(topic, listener) {
        assertCoordinationName('topic', topic);
        const sub = nc.subscribe(subject(topic), {
          callback: (err, msg) => {
            if (err) return;
            let payload: EventPayload;
            try {
              payload = msg.json<EventPayload>();
            } catch {
              return; // not ours: ignored
            }
            try {
              listener(payload);
            } catch {
              // One listener's failure must not stop the others; listeners log their own errors.
            }
          },
        });
        subscriptions.add(sub);
        return () => {
          subscriptions.delete(sub);
          sub.unsubscribe();
        };
      },
      async flush() {
        await nc.flush();
      },
    };
  }

  /** Connects to NATS (`nats://host:port`, comma-separated for several servers). */
  static async connect(options: {
    url: string;
    prefix?: string;
    log?: (msg: string) => void;
  }): Promise<NatsCoordination> {
    const prefix = options.prefix ?? 'lk';
    assertCoordinationName('topic', prefix);
    // The URL may carry credentials: the error names the variable, never the value.
    const nc = await connect({ servers: options.url.split(',').map((s) => s.trim()), name: 'letkite-gateway' }).catch(
      (err: unknown) => {
        const code = (err as { code?: string })?.code ?? 'error';
        throw new Error(`cannot reach NATS at LETKITE_NATS_URL (${code})`);
      },
    );
    return new NatsCoordination(nc, prefix, options.log ?? (() => {}));
  }

  limiter(name: string, options: LimiterOptions): Limiter {
    assertCoordinationName('limiter', name);
    // Entries outlive their use by the bucket's TTL at most; a longer-lived entry would be forgotten by the rule.
    const bucket = () => this.bucket(`limit_${name}`, stateLifetimeMs(options) * 2);
    const read = async (kv: KV, key: string): Promise<{ entry: KvEntry | null; state: LimiterState | null }> => {
      const entry = await kv.get(key);
      if (entry?.operation !== 'PUT') return { entry, state: null };
      return { entry, state: entry.json<LimiterState>() };
    };
    return {
      async hit(key, now) {
        const kv = await bucket();
        const k = kvKey(key);
        for (let tries = 0; tries < MAX_CAS_TRIES; tries++) {
          const { entry, state } = await read(kv, k);
          const { decision, next } = decideHit(state, now, options);
          if (!next) return decision;
          try {
            await kv.put(k, JSON.stringify(next), { previousSeq: entry?.revision ?? 0 });
            return decision;
          } catch (err) {
            if (!isCasConflict(err)) throw err;
          }
        }
        throw new Error(`limiter "${name}": too much contention on one key`);
      },
      async reset(key) {
        await (await bucket()).delete(kvKey(key));
      },
      async state(key, now) {
        const { state } = await read(await bucket(), kvKey(key));
        return peekHit(state, now, options);
      },
    };
  }

  lease(name: string, ttlMs: number): Lease {
    assertCoordinationName('lease', name);
    const me = randomUUID();
    const bucket = () => this.bucket('leases', 0);
    const held = this.heldLeases;
    const lease: Lease = {
      async hold() {
        const kv = await bucket();
        for (let tries = 0; tries < MAX_CAS_TRIES; tries++) {
          const entry = await kv.get(name);
          const current =
            entry && entry.operation === 'PUT' ? entry.json<{ holder: string; expiresAt: number }>() : null;
          const now = Date.now();
          if (current && current.holder !== me && current.expiresAt > now) return false;
          try {
            await kv.put(name, JSON.stringify({ holder: me, expiresAt: now + ttlMs }), {
              previousSeq: entry?.revision ?? 0,
            });
            held.add(lease);
            return true;
          } catch (err) {
            if (!isCasConflict(err)) throw err;
          }
        }
        return false;
      },
      async release() {
        held.delete(lease);
        const kv = await bucket();
        const entry = await kv.get(name);
        if (entry?.operation !== 'PUT' || entry.json<{ holder: string }>().holder !== me) return;
        // Written as lapsed, guarded by the revision: a holder that took over meanwhile keeps it.
        await kv
          .put(name, JSON.stringify({ holder: '', expiresAt: 0 }), { previousSeq: entry.revision })
          .catch((err: unknown) => {
            if (!isCasConflict(err)) throw err;
          });
      },
    };
    return lease;
  }

  async close(): Promise<void> {
    for (const lease of [...this.heldLeases]) {
      await lease.release().catch((err: unknown) => this.log(`releasing a lease failed: ${String(err)}`));
    }
    for (const sub of this.subscriptions) sub.unsubscribe();
    this.subscriptions.clear();
    await this.nc.drain().catch(() => undefined);
  }

  /** Deletes this prefix's KV buckets (tests clean up after themselves). */
  async destroyBuckets(): Promise<void> {
    for (const kv of this.buckets.values()) await (await kv).destroy();
    this.buckets.clear();
  }

  private bucket(suffix: string, ttlMs: number): Promise<KV> {
    const name = `${this.prefix}_${suffix}`.replace(/[^A-Za-z0-9_-]/g, '_');
    let kv = this.buckets.get(name);
    if (!kv) {
      kv = this.nc.jetstream().views.kv(name, { history: 1, ...(ttlMs > 0 ? { ttl: ttlMs } : {}) });
      // A failed open is retried on the next call rather than remembered.
      kv.catch(() => this.buckets.delete(name));
      this.buckets.set(name, kv);
    }
    return kv;
  }
}
