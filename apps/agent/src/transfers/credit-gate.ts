import { LetKiteError, MAX_FRAME_BYTES } from '@letkite/protocol';

/**
 * The most unspent credit a sender accepts: the largest window a destination may grant (`window_bytes` of
 * transfer_receive) plus one frame. The gateway only relays the destination's credit, so more means it makes
 * credit up; honouring it would let a rogue gateway that never reads have the agent queue a whole file in memory.
 */
export const MAX_UNSPENT_CREDIT = 64 * 1024 * 1024 + MAX_FRAME_BYTES;

/**
 * The sending side of credit flow control: `take` waits while no credit is left. A sender may go on while it has
 * any credit at all, so one frame can overdraw the window by up to its own size (the receiver allows for that);
 * this keeps a window smaller than a chunk from deadlocking.
 */
export class CreditGate {
  private available = 0;
  private waiter: { resolve: () => void; reject: (err: unknown) => void } | null = null;
  private failure: unknown = null;

  grant(bytes: number): void {
    this.available += bytes;
    if (this.available > MAX_UNSPENT_CREDIT) {
      this.fail(new LetKiteError('protocol_error', 'the gateway granted more credit than any transfer window holds'));
      return;
    }
    if (this.available > 0) this.wake();
  }

  /** Fails the sender's next (or current) wait, e.g. when the request is cancelled. */
  fail(err: unknown): void {
    this.failure ??= err;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(err);
  }

  async take(cost: number): Promise<void> {
    if (this.failure !== null) throw this.failure;
    if (this.available <= 0) {
      if (this.waiter) throw new LetKiteError('internal', 'one sender at a time');
      await new Promise<void>((resolve, reject) => {
        this.waiter = { resolve, reject };
      });
    }
    this.available -= cost;
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.resolve();
  }
}
