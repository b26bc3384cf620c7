import { EventEmitter } from 'node:events';

/**
 * In-process wake-ups for `approval_wait`: a decision, use or expiry of a request is announced here so a waiting
 * call answers at once. Waiters re-read the store as well (another gateway process may have decided it), so a
 * missed event only delays an answer, it never changes it.
 */
export class ApprovalEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  changed(approvalId: string): void {
    this.emitter.emit(approvalId);
  }

  /** Calls `listener` on the next change of `approvalId`; returns the unsubscribe function. */
  onChange(approvalId: string, listener: () => void): () => void {
    this.emitter.on(approvalId, listener);
    return () => this.emitter.off(approvalId, listener);
  }
}
