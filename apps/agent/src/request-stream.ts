import type { CreditFrame, EntryEndFrame, EntryFrame, StreamEndFrame } from '@letkite/protocol';

/** What the gateway sends a running request after its `request` frame (transfers; ops-transfer.ts). */
export type InboundStreamEvent =
  | { type: 'data'; payload: Buffer[]; bytes: number }
  | CreditFrame
  | EntryFrame
  | EntryEndFrame
  | StreamEndFrame;

/**
 * The streaming side of one request: frames the gateway pushes to it, and a way to send binary data frames.
 * Events that arrive before the operation starts listening are kept (the operation checks its parameters first);
 * how much can arrive is bounded by the credit the operation itself grants.
 */
export class RequestStream {
  private listener: ((event: InboundStreamEvent) => void) | null = null;
  private early: InboundStreamEvent[] = [];

  constructor(private readonly sendBinaryFrame: (frame: Uint8Array, written?: () => void) => boolean) {}

  /** Delivers one inbound event (called by the connection). */
  deliver(event: InboundStreamEvent): void {
    if (this.listener) this.listener(event);
    else this.early.push(event);
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
