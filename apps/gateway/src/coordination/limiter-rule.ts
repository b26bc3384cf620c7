import type { LimitDecision, LimiterOptions } from './coordination';

/** What a limiter stores per key: the count, when the window began, the last hit and (with backoff) the block. */
export interface LimiterState {
  count: number;
  windowStart: number;
  lastHit: number;
  blockedUntil: number;
}

/**
 * The limiter's decision as a pure function of the stored state, so every implementation (in memory, NATS KV with
 * compare-and-set) decides exactly alike. `next` is null when nothing needs writing (a refused hit).
 */
export function decideHit(
  prev: LimiterState | null,
  now: number,
  options: LimiterOptions,
): { decision: LimitDecision; next: LimiterState | null } {
  const current = live(prev, now, options);
  const refused = refusal(current, now, options);
  if (refused) return { decision: refused, next: null };
  const count = (current?.count ?? 0) + 1;
  const next: LimiterState = {
    count,
    windowStart: current?.windowStart ?? now,
    lastHit: now,
    blockedUntil: options.backoff && count >= options.limit ? now + backoffDelay(count, options) : 0,
  };
  return { decision: { allowed: true, count, retryAfterMs: 0 }, next };
}

/** What a hit at `now` would decide, without counting it. */
export function peekHit(prev: LimiterState | null, now: number, options: LimiterOptions): LimitDecision {
  const current = live(prev, now, options);
  return refusal(current, now, options) ?? { allowed: true, count: current?.count ?? 0, retryAfterMs: 0 };
}

/** How long, after the `count`-th hit, the next one must wait: baseMs · 2^(count − limit), capped at maxMs. */
export function backoffDelay(count: number, options: LimiterOptions): number {
  if (!options.backoff || count < options.limit) return 0;
  const { baseMs, maxMs } = options.backoff;
  return Math.min(maxMs, baseMs * 2 ** Math.min(30, count - options.limit));
}

/** How long a stored key can matter: the window, plus the longest block with backoff. */
export function stateLifetimeMs(options: LimiterOptions): number {
  return options.windowMs + (options.backoff?.maxMs ?? 0);
}

function live(prev: LimiterState | null, now: number, options: LimiterOptions): LimiterState | null {
  if (!prev) return null;
  if (options.backoff) {
    // Forgotten after a quiet window, but never while a block is still running.
    return now - prev.lastHit >= options.windowMs && now >= prev.blockedUntil ? null : prev;
  }
  return now - prev.windowStart >= options.windowMs ? null : prev;
}

function refusal(current: LimiterState | null, now: number, options: LimiterOptions): LimitDecision | null {
  if (!current) return null;
  if (options.backoff) {
    return now < current.blockedUntil
      ? { allowed: false, count: current.count, retryAfterMs: current.blockedUntil - now }
      : null;
  }
  return current.count >= options.limit
    ? { allowed: false, count: current.count, retryAfterMs: current.windowStart + options.windowMs - now }
    : null;
}
