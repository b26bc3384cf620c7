import { LetKiteError, MAX_FRAME_BYTES } from '@letkite/protocol';
import { STREAM_RECORD_COST } from '@letkite/protocol/ops-transfer';
import type { InboundStreamEvent } from '../request-stream';

/** What an inbound event costs in credit (ops-transfer.ts). */
export function creditCost(event: InboundStreamEvent): number {
  if (event.type === 'data') return event.bytes;
  return event.type === 'entry' || event.type === 'entry_end' ? STREAM_RECORD_COST : 0;
}

/**
 * The receiving side of credit flow control: events the gateway pushes wait here until the operation takes them.
 * The sender may overdraw the window by one frame at most; more means it ignores credit, and the stream fails
 * rather than buffer without bound.
 */
export class Inbox {
  private readonly queue: InboundStreamEvent[] = [];
  private head = 0;
  private waiter: { resolve: (event: InboundStreamEvent) => void; reject: (err: unknown) => void } | null = null;
  private failure: unknown = null;
  private outstanding = 0;

  constructor(
    private readonly windowBytes: number,
    private readonly grant: (bytes: number) => void,
  ) {}

  push(event: InboundStreamEvent): void {
    if (this.failure !== null) return;
    this.outstanding += creditCost(event);
    if (this.outstanding > this.windowBytes + MAX_FRAME_BYTES) {
      this.fail(new LetKiteError('protocol_error', 'the transfer stream overran its credit'));
      return;
    }
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = null;
      waiter.resolve(event);
    } else {
      this.queue.push(event);
    }
  }

  fail(err: unknown): void {
    this.failure ??= err;
    this.queue.length = 0;
    this.head = 0;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(this.failure);
  }

  next(): Promise<InboundStreamEvent> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.head < this.queue.length) {
      const event = this.queue[this.head] as InboundStreamEvent;
      this.queue[this.head] = undefined as never;
      this.head += 1;
      if (this.head === this.queue.length) {
        this.queue.length = 0;
        this.head = 0;
      }
      return Promise.resolve(event);
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Hands `bytes` of credit back to the sender once what they paid for has been dealt with. */
  credit(bytes: number): void {
    if (bytes <= 0 || this.failure !== null) return;
    this.outstanding -= bytes;
    this.grant(bytes);
  }
}
