import { EventEmitter } from 'node:events';
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

/** Most keys one limiter keeps before it drops the ones whose window is over (bounded memory under attack). */
const SWEEP_ABOVE = 10_000;

/**
 * Coordination for embedded mode: one gateway process is the whole cluster, so events are an EventEmitter,
 * limiters are maps and a lease is held by whichever handle takes it first. Decisions are synchronous between
 * awaits, so concurrent hits are counted exactly.
 */
export class LocalCoordination implements Coordination {
  readonly events: CoordinationEvents;
  private readonly emitter = new EventEmitter();
  private readonly limiters = new Map<string, { options: LimiterOptions; keys: Map<string, LimiterState> }>();
  private readonly leases = new Map<string, { holder: symbol; expiresAt: number }>();

  /** `now` drives lease expiry (limiters take the time of each hit). */
  constructor(private readonly now: () => number = Date.now) {
    this.emitter.setMaxListeners(0);
    const emitter = this.emitter;
    this.events = {
      async publish(topic, payload = {}) {
        assertCoordinationName('topic', topic);
        // Delivered after the publisher's turn, as over a network: a listener never runs inside `publish`.
        queueMicrotask(() => emitter.emit(topic, payload));
      },
      subscribe(topic, listener) {
        assertCoordinationName('topic', topic);
        const safe = (payload: EventPayload) => {
          try {
            listener(payload);
          } catch {
            // One listener's failure must not stop the others; listeners log their own errors.
          }
        };
        emitter.on(topic, safe);
        return () => emitter.off(topic, safe);
      },
      async flush() {},
    };
  }

  limiter(name: string, options: LimiterOptions): Limiter {
    assertCoordinationName('limiter', name);
    let entry = this.limiters.get(name);
    if (!entry) {
      entry = { options, keys: new Map() };
      this.limiters.set(name, entry);
    }
    const keys = entry.keys;
    return {
      async hit(key, now) {
        const { decision, next } = decideHit(keys.get(key) ?? null, now, options);
        if (next) {
          if (keys.size > SWEEP_ABOVE) sweep(keys, now, options);
          keys.set(key, next);
        }
        return decision;
      },
      async reset(key) {
        keys.delete(key);
      },
      async state(key, now) {
        return peekHit(keys.get(key) ?? null, now, options);
      },
    };
  }

  lease(name: string, ttlMs: number): Lease {
    assertCoordinationName('lease', name);
    const me = Symbol(name);
    const leases = this.leases;
    const now = this.now;
    return {
      async hold() {
        const current = leases.get(name);
        const t = now();
        if (current && current.holder !== me && current.expiresAt > t) return false;
        leases.set(name, { holder: me, expiresAt: t + ttlMs });
        return true;
      },
      async release() {
        if (leases.get(name)?.holder === me) leases.delete(name);
      },
    };
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
    this.leases.clear();
  }
}

function sweep(keys: Map<string, LimiterState>, now: number, options: LimiterOptions): void {
  const lifetime = stateLifetimeMs(options);
  for (const [k, s] of keys) if (now - s.lastHit >= lifetime && now >= s.blockedUntil) keys.delete(k);
}
