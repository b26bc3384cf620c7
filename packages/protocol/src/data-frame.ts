import { MAX_FRAME_BYTES } from './version';

/**
 * Binary data frames: bulk bytes of a streamed request (file transfers) travel as binary WebSocket messages, so
 * they are not base64'd and JSON-escaped. Layout (a fixed 66-byte header, then the payload):
 *
 *   byte 0         DATA_FRAME_KIND (1)
 *   byte 1         n = length of the request id in bytes (1..64, printable ASCII)
 *   bytes 2..2+n   the request id the data belongs to; the rest of the 64 id bytes are zero
 *   bytes 66..     payload
 *
 * The fixed header lets the gateway pass a frame from one agent to another by rewriting the id in place, with no
 * copy of the payload. Every JSON frame stays a text message; a binary message is always a data frame. Like every
 * frame, a data frame is at most MAX_FRAME_BYTES, so its payload is at most MAX_DATA_PAYLOAD_BYTES.
 */
export const DATA_FRAME_KIND = 1;

const MAX_ID_BYTES = 64;

/** Bytes of a data frame's header; the payload starts here. */
export const DATA_FRAME_HEADER_BYTES = 2 + MAX_ID_BYTES;

/** Largest payload of one data frame. */
export const MAX_DATA_PAYLOAD_BYTES = MAX_FRAME_BYTES - DATA_FRAME_HEADER_BYTES;

function idBytes(id: string): number[] {
  const bytes: number[] = [];
  for (let i = 0; i < id.length; i += 1) {
    const code = id.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) throw new RangeError(`a data frame id must be printable ASCII: "${id}"`);
    bytes.push(code);
  }
  if (bytes.length === 0 || bytes.length > MAX_ID_BYTES) throw new RangeError(`bad data frame id length: "${id}"`);
  return bytes;
}

/**
 * Writes the header for `id` at the start of `frame` (replacing any header already there) and returns where the
 * payload starts. A sender can read file data straight into the frame after the header; the gateway re-addresses
 * a received frame with it.
 */
export function writeDataFrameHeader(frame: Uint8Array, id: string): number {
  const bytes = idBytes(id);
  frame[0] = DATA_FRAME_KIND;
  frame[1] = bytes.length;
  frame.set(bytes, 2);
  frame.fill(0, 2 + bytes.length, DATA_FRAME_HEADER_BYTES);
  return DATA_FRAME_HEADER_BYTES;
}

/** A data frame for `id` carrying a copy of `payload`. */
export function encodeDataFrame(id: string, payload: Uint8Array): Uint8Array {
  if (payload.length > MAX_DATA_PAYLOAD_BYTES) throw new RangeError(`data frame payload of ${payload.length} bytes`);
  const frame = new Uint8Array(DATA_FRAME_HEADER_BYTES + payload.length);
  frame.set(payload, writeDataFrameHeader(frame, id));
  return frame;
}

/** The request id and payload of a binary message (the payload is a view, not a copy), or null if malformed. */
export function decodeDataFrame(frame: Uint8Array): { id: string; payload: Uint8Array } | null {
  if (frame.length < DATA_FRAME_HEADER_BYTES || frame.length > MAX_FRAME_BYTES || frame[0] !== DATA_FRAME_KIND) {
    return null;
  }
  const n = frame[1] as number;
  if (n < 1 || n > MAX_ID_BYTES) return null;
  let id = '';
  for (let i = 2; i < 2 + n; i += 1) {
    const code = frame[i] as number;
    if (code < 0x21 || code > 0x7e) return null;
    id += String.fromCharCode(code);
  }
  return { id, payload: frame.subarray(DATA_FRAME_HEADER_BYTES) };
}

/**
 * Size of the WebSocket frames a data frame travels in: one data frame is one WebSocket message, sent as
 * fragments of at most this many bytes. A receiver (ws, binaryType "fragments") then gets each fragment as a view
 * of the socket's own read buffer, except the rare fragment that straddles two reads; a message sent in one piece
 * would instead be copied into a new half-megabyte buffer on every hop, and those buffers keep the garbage
 * collector busy. The size trades that copying (about this much per 64 KiB socket read) against per-fragment
 * overhead.
 */
export const DATA_FRAGMENT_BYTES = 16 * 1024;

/** The pieces to send `frame` in as the fragments of one WebSocket message (views, no copies). */
export function dataFrameFragments(frame: Uint8Array, size: number = DATA_FRAGMENT_BYTES): Uint8Array[] {
  if (frame.length <= size) return [frame];
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < frame.length; at += size) pieces.push(frame.subarray(at, Math.min(at + size, frame.length)));
  return pieces;
}

/**
 * The request id and payload of a binary message received as fragments, or null if malformed. `frame` is the
 * message itself, its header guaranteed to lie in `frame[0]` (so it can be re-addressed in place); `payload` holds
 * views of the fragments, not copies. A sender normally puts the whole header in the first fragment; if one did
 * not, the header (only) is copied together.
 */
export function decodeDataFragments(
  fragments: readonly Buffer[],
): { id: string; frame: Buffer[]; payload: Buffer[]; bytes: number } | null {
  let total = 0;
  for (const f of fragments) total += f.length;
  if (total < DATA_FRAME_HEADER_BYTES || total > MAX_FRAME_BYTES) return null;
  const frame = (fragments[0] as Buffer).length < DATA_FRAME_HEADER_BYTES ? joinHeader(fragments) : [...fragments];
  const first = frame[0] as Buffer;
  const decoded = decodeDataFrame(first.subarray(0, DATA_FRAME_HEADER_BYTES));
  if (!decoded) return null;
  const payload: Buffer[] = [];
  if (first.length > DATA_FRAME_HEADER_BYTES) payload.push(first.subarray(DATA_FRAME_HEADER_BYTES));
  for (let i = 1; i < frame.length; i += 1) {
    const piece = frame[i] as Buffer;
    if (piece.length > 0) payload.push(piece);
  }
  return { id: decoded.id, frame, payload, bytes: total - DATA_FRAME_HEADER_BYTES };
}

/** Fragments whose first one is shorter than the header: the same bytes, with the header in the first. */
function joinHeader(fragments: readonly Buffer[]): Buffer[] {
  const head = Buffer.allocUnsafe(DATA_FRAME_HEADER_BYTES);
  let filled = 0;
  const rest: Buffer[] = [];
  for (const f of fragments) {
    if (filled < DATA_FRAME_HEADER_BYTES) {
      const n = Math.min(f.length, DATA_FRAME_HEADER_BYTES - filled);
      head.set(f.subarray(0, n), filled);
      filled += n;
      if (n < f.length) rest.push(f.subarray(n));
    } else {
      rest.push(f);
    }
  }
  return [head, ...rest];
}
