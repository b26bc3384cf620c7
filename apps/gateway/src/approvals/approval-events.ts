import { EventEmitter } from 'node:events';
import type { Coordination } from '../coordination/coordination';

/** The coordination topic a decision, use or expiry of any approval request is announced on. */
export const APPROVAL_CHANGED_TOPIC = 'approval.changed';

/**
 * Wake-ups for `approval_wait`: a decision, use or expiry of a request is announced to every gateway (through
 * Coordination), so a call waiting on any of them answers at once. Waiters re-read the store as well, so a missed
 * event only delays an answer, it never changes it. One subscription per gateway, fanned out here by id.
 */
export class ApprovalEvents {
  private readonly local = new EventEmitter();
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly coordination: Coordination) {
    this.local.setMaxListeners(0);
  }

  /** Announces a change of `approvalId` to every gateway (this one too). */
  changed(approvalId: string): void {
    // Fire and forget: a lost announcement is covered by the waiters' poll.
    this.coordination.events.publish(APPROVAL_CHANGED_TOPIC, { id: approvalId }).catch(() => undefined);
  }

  /** Calls `listener` on the next change of `approvalId`; returns the unsubscribe function. */
  onChange(approvalId: string, listener: () => void): () => void {
    this.unsubscribe ??= this.coordination.events.subscribe(APPROVAL_CHANGED_TOPIC, (p) => {
      if (typeof p.id === 'string') this.local.emit(p.id);
    });
    this.local.on(approvalId, listener);
    return () => this.local.off(approvalId, listener);
  }

  /** Stops listening (gateway shutdown). */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.local.removeAllListeners();
  }
}
