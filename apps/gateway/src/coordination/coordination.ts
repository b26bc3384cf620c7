/**
 * The gateway's ephemeral shared state, behind one seam (docs/design/coordination.md): events that reach every
 * gateway, rate limiters whose counters every gateway shares, and leases so one gateway of a cluster does a job.
 * Embedded mode uses `LocalCoordination` (one process); a cluster implementation (NATS) only adds an adapter. Every
 * implementation passes `coordination-contract.ts`.
 */
export interface Coordination {
  /** Fire-and-forget notifications to every gateway (this one included). */
  readonly events: CoordinationEvents;
  /** The limiter called `name`; every gateway asking for the same name shares its counters. */
  limiter(name: string, options: LimiterOptions): Limiter;
  /** A lease called `name`: at most one holder in the cluster at a time, for `ttlMs` unless renewed. */
  lease(name: string, ttlMs: number): Lease;
  /** Releases held leases and stops every subscription. */
  close(): Promise<void>;
}

/** A JSON object carried with an event (ids only: never a secret, never something a receiver must trust). */
export type EventPayload = Record<string, string | number | boolean | null>;

/**
 * Topics are dot-separated words (`approval.changed`, `credential.revoked`). Delivery is at most once: a listener
 * that must not miss a change also re-reads the store (approval_wait polls, every MCP request checks its session).
 */
export interface CoordinationEvents {
  publish(topic: string, payload?: EventPayload): Promise<void>;
  /** Calls `listener` for each event on `topic` from now on; returns the unsubscribe function. */
  subscribe(topic: string, listener: (payload: EventPayload) => void): () => void;
  /** Resolves once every subscription made so far receives events published from anywhere after this. */
  flush(): Promise<void>;
}

/**
 * A limiter's rule. Without `backoff`: at most `limit` hits per fixed window of `windowMs` (from the window's first
 * hit). With `backoff`: `limit` hits are free, then each further hit must wait `baseMs · 2^(n−limit)` (at most
 * `maxMs`) after the previous one; the count is forgotten after `windowMs` without a hit, or by `reset`.
 */
export interface LimiterOptions {
  limit: number;
  windowMs: number;
  backoff?: { baseMs: number; maxMs: number };
}

/** What a hit decided. A refused hit is not counted (it changes nothing a limiter stores). */
export interface LimitDecision {
  allowed: boolean;
  /** Hits counted in the current window, this one included when allowed. */
  count: number;
  /** When refused: how long until a hit would be allowed; 0 when allowed. */
  retryAfterMs: number;
}

/** Counters per key (an address, an address and an account, a person …), shared by every gateway. */
export interface Limiter {
  /** Counts one hit for `key` at `now` (epoch ms), atomically: concurrent hits each take one of the allowed. */
  hit(key: string, now: number): Promise<LimitDecision>;
  /** Forgets `key` (e.g. after a successful sign-in). */
  reset(key: string): Promise<void>;
  /** What a hit at `now` would decide, without counting it. */
  state(key: string, now: number): Promise<LimitDecision>;
}

/** One holder per cluster. `hold` takes or renews it; it lapses `ttlMs` after the last renewal. */
export interface Lease {
  /** Takes the lease if it is free or lapsed, renews it if held; false while another holder has it. */
  hold(): Promise<boolean>;
  /** Gives the lease up (if held), so another gateway can take it at once. */
  release(): Promise<void>;
}

const TOPIC = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/i;

/** Refuses a topic or name that would not be a valid NATS subject or KV key token. */
export function assertCoordinationName(kind: 'topic' | 'limiter' | 'lease', name: string): void {
  if (!TOPIC.test(name) || name.length > 200) throw new Error(`invalid coordination ${kind} name "${name}"`);
}
