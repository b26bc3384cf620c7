import {
  type CreditFrame,
  type EntryEndFrame,
  type EntryFrame,
  MAX_FRAME_BYTES,
  type StreamEndFrame,
} from '@letkite/protocol';

/** What the gateway sends a running request after its `request` frame (transfers; ops-transfer.ts). */
export type InboundStreamEvent =
  | { type: 'data'; payload: Buffer[]; bytes: number }
  | CreditFrame
  | EntryFrame
  | EntryEndFrame
  | StreamEndFrame;

/**
 * Most events, and data bytes, kept for an operation that is not listening. A streamed operation listens as it
 * starts and a sender has no credit before that, so an honest gateway stays far below; an operation that takes no
 * stream (exec, …) never listens, and what is pushed at it must not pile up.
 */
const MAX_EARLY_EVENTS = 256;
const MAX_EARLY_BYTES = 2 * MAX_FRAME_BYTES;

/**
 * The streaming side of one request: frames the gateway pushes to it, and a way to send binary data frames.
 * Events that arrive before the operation starts listening are kept, up to a small bound; once it listens, how
 * much can arrive is bounded by the credit the operation itself grants.
 */
export class RequestStream {
  private listener: ((event: InboundStreamEvent) => void) | null = null;
  private early: InboundStreamEvent[] = [];
  private earlyBytes = 0;

  constructor(private readonly sendBinaryFrame: (frame: Uint8Array, written?: () => void) => boolean) {}

  /**
   * Delivers one inbound event (called by the connection). False when the sender overran the bound for an
   * operation that is not listening: the connection treats that as a protocol error.
   */
  deliver(event: InboundStreamEvent): boolean {
    if (this.listener) {
      this.listener(event);
      return true;
    }
    this.earlyBytes += event.type === 'data' ? event.bytes : 0;
    if (this.early.length >= MAX_EARLY_EVENTS || this.earlyBytes > MAX_EARLY_BYTES) {
      this.early = [];
      return false;
    }
    this.early.push(event);
    return true;
  }

  /** Starts receiving this request's events; the ones that came early are delivered first, in order. */
  listen(listener: (event: InboundStreamEvent) => void): void {
    this.listener = listener;
    const early = this.early;
    this.early = [];
    for (const event of early) listener(event);
  }

  /**
   * Sends an encoded data frame; false when the socket is gone. `written` runs once the socket no longer needs the
   * frame's memory (so the caller may reuse it). Flow control is the caller's (credit).
   */
  sendBinary(frame: Uint8Array, written?: () => void): boolean {
    return this.sendBinaryFrame(frame, written);
  }
}
