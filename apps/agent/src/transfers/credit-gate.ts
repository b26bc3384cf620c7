import { LetKiteError } from '@letkite/protocol';

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
