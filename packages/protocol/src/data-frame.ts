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
