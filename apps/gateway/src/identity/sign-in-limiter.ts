import { LetKiteError } from '@letkite/protocol';

/**
 * Fixed-window attempt counter for sign-in endpoints (per client address and per e-mail), in memory: it slows
 * guessing down; the per-person lockout that survives restarts lives in the store.
 */
export class AttemptLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts an attempt for `key`; throws `rate_limited` once over the limit in the current window. */
  hit(key: string, now: number): void {
    const w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      if (this.windows.size > 10_000) this.sweep(now);
      this.windows.set(key, { start: now, count: 1 });
      return;
    }
    w.count++;
    if (w.count > this.limit) {
      const retryAfterS = Math.ceil((w.start + this.windowMs - now) / 1000);
      throw new LetKiteError('rate_limited', `too many sign-in attempts; try again in ${retryAfterS} s`, {
        retry_after_s: retryAfterS,
      });
    }
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
  }
}

/** Consecutive wrong passwords (or codes) before a person's password sign-in locks. */
export const LOCKOUT_AFTER = 5;
/** How long a lockout lasts. */
export const LOCKOUT_MS = 15 * 60_000;
