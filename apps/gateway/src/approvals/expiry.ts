import { MAX_APPROVAL_TIMEOUT_MS, MIN_APPROVAL_TIMEOUT_MS } from '@letkite/policy';

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
