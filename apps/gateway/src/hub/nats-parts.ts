import { MAX_FRAME_BYTES } from '@letkite/protocol';
import { headers, type Msg, type MsgHdrs, type NatsConnection } from 'nats';

/**
 * Messages between gateways larger than the NATS server's `max_payload` (1 MiB by default, and a server may be set
 * lower) are split into parts on the same subject and put back together by the receiver. NATS keeps the order of
 * one connection's messages on one subject, so parts need only a position, not an id. A result can be a whole
 * agent frame (MAX_FRAME_BYTES) plus its envelope, which is just over the default; most messages are one part.
 */

export const KIND = 'lk-kind';
export const BYTES = 'lk-bytes';
/** `i/n` on each part of a split message, 1-based; absent on a message sent whole. */
export const PART = 'lk-part';

/** Room left for headers and the protocol line, which count against max_payload too. */
const HEADROOM = 4096;
/** The NATS default, for a connection that has not read the server's INFO yet (it always has, after connect). */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/** What one message may add up to once joined: bounds what a broken or hostile peer can make us hold. */
export const MAX_JOINED_BYTES = 2 * MAX_FRAME_BYTES + 64 * 1024;

/** The largest body one message may carry on this connection (the server's max_payload less the headroom). */
export function messageBudget(nc: NatsConnection): number {
  const max = nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  return Math.max(16 * 1024, max - HEADROOM);
}

/**
 * `nc.publish` that never throws: on a closed or draining connection (shutdown, NATS gone for good) the message is
 * lost, which the other side sees as silence (its liveness check or timeout), never as an exception in a timer.
 */
export function safePublish(
  nc: NatsConnection,
  subject: string,
  data?: Uint8Array | string,
  options?: { headers?: MsgHdrs },
): void {
  try {
    nc.publish(subject, data, options);
  } catch {
    // the connection is closed: see above
  }
}

function partHeaders(kind: string, extra: Record<string, string>, part?: string): MsgHdrs {
  const h = headers();
  h.set(KIND, kind);
  for (const [k, v] of Object.entries(extra)) h.set(k, v);
  if (part) h.set(PART, part);
  return h;
}

/** Publishes `body` whole when it fits the budget, else as consecutive parts (views of it: no copy). */
export function publishParted(
  nc: NatsConnection,
  subject: string,
  kind: string,
  body: Uint8Array,
  budget: number,
  extra: Record<string, string> = {},
): void {
  if (body.byteLength <= budget) {
    safePublish(nc, subject, body, { headers: partHeaders(kind, extra) });
    return;
  }
  const n = Math.ceil(body.byteLength / budget);
  for (let i = 0; i < n; i += 1) {
    const piece = body.subarray(i * budget, Math.min(body.byteLength, (i + 1) * budget));
    safePublish(nc, subject, piece, { headers: partHeaders(kind, extra, `${i + 1}/${n}`) });
  }
}

/** One whole message: its kind, its headers (of the last part) and its body. */
export interface WholeMessage {
  kind: string | undefined;
  headers: MsgHdrs | undefined;
  data: Uint8Array;
}

/**
 * Puts split messages of one subject back together. `accept` returns the whole message once its last part is in,
 * null while parts are missing, and throws on parts out of order or over MAX_JOINED_BYTES (the peer is broken).
 */
export class PartAssembler {
  private parts: Uint8Array[] = [];
  private size = 0;
  private expected = 0;

  accept(msg: Msg): WholeMessage | null {
    const kind = msg.headers?.get(KIND) || undefined;
    const part = msg.headers?.get(PART);
    if (!part) {
      if (this.parts.length > 0) throw new Error('a whole message in the middle of a split one');
      return { kind, headers: msg.headers, data: msg.data };
    }
    const m = /^(\d{1,6})\/(\d{1,6})$/.exec(part);
    const i = Number(m?.[1]);
    const n = Number(m?.[2]);
    if (!m || i < 1 || i > n || i !== this.parts.length + 1 || (this.expected !== 0 && n !== this.expected)) {
      throw new Error(`part ${part} out of order`);
    }
    this.expected = n;
    this.size += msg.data.byteLength;
    if (this.size > MAX_JOINED_BYTES) throw new Error('a split message over the size limit');
    this.parts.push(msg.data);
    if (i < n) return null;
    const data = Buffer.concat(this.parts);
    this.parts = [];
    this.size = 0;
    this.expected = 0;
    return { kind, headers: msg.headers, data };
  }
}
