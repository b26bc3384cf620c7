import { MAX_APPROVAL_TIMEOUT_MS, MIN_APPROVAL_TIMEOUT_MS } from '@letkite/policy';
import type { Lease } from '../coordination/coordination';
import { startLeasedInterval } from '../coordination/leased-interval';

/**
 * When a request made at `now` under a policy's `approval.timeout` expires. The policy schema already bounds the
 * timeout to 1 minute .. 24 hours; clamping again keeps a hand-edited stored policy from making a request that
 * never expires. An approved request stays usable until the same moment.
 */
export function approvalExpiresAt(now: Date, timeoutMs: number): Date {
  const bounded = Math.min(MAX_APPROVAL_TIMEOUT_MS, Math.max(MIN_APPROVAL_TIMEOUT_MS, timeoutMs));
  return new Date(now.getTime() + bounded);
}

/** Whether a request with this expiry can still be decided or used at `now` (the expiry instant itself is late). */
export function isLive(expiresAt: string, now: Date): boolean {
  return Date.parse(expiresAt) > now.getTime();
}

/** How often the expiry sweeper runs; its lease lapses after three missed runs, so another gateway takes over. */
export const EXPIRY_SWEEP_MS = 15_000;

/**
 * Marks expired requests even when nobody looks at them. Only the gateway holding the lease sweeps (one sweeper
 * per cluster); the store's expire is a conditional write anyway, and `expireDue` of the approvals' store tells
 * the requester and wakes waiters once per request, so a second sweeper would only cost queries. Returns the stop
 * function, which gives the lease up.
 */
export function startExpirySweeper(options: {
  expireDue: (now: string) => Promise<unknown>;
  lease: Lease;
  now: () => Date;
  log: (msg: string) => void;
  everyMs?: number;
}): () => Promise<void> {
  return startLeasedInterval({
    lease: options.lease,
    everyMs: options.everyMs ?? EXPIRY_SWEEP_MS,
    work: () => options.expireDue(options.now().toISOString()),
    log: options.log,
    what: 'expiring approvals',
  });
}
