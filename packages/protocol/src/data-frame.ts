import { MAX_FRAME_BYTES } from './version';

/**
 * Binary data frames: bulk bytes of a streamed request (file transfers) travel as binary WebSocket messages, so
 * they are not base64'd and JSON-escaped. Layout:
 *
 *   byte 0        DATA_FRAME_KIND (1)
 *   byte 1        n = length of the request id in bytes (1..64, ASCII)
 *   bytes 2..2+n  the request id the data belongs to
 *   the rest      payload
 *
 * Every JSON frame stays a text message; a binary message is always a data frame. Like every frame, a data frame
 * is at most MAX_FRAME_BYTES, so its payload is at most MAX_DATA_PAYLOAD_BYTES.
 */
export const DATA_FRAME_KIND = 1;

const MAX_ID_BYTES = 64;

/** Largest payload of one data frame (room left for the longest header). */
export const MAX_DATA_PAYLOAD_BYTES = MAX_FRAME_BYTES - 2 - MAX_ID_BYTES;

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

/** Bytes the header of a data frame for `id` takes. */
export function dataFrameHeaderBytes(id: string): number {
  return 2 + idBytes(id).length;
}

/**
 * Writes the header for `id` at the start of `target` and returns where the payload starts. Lets a sender read
 * file data straight into the frame buffer after the header, with no copy.
 */
export function writeDataFrameHeader(target: Uint8Array, id: string): number {
  const bytes = idBytes(id);
  target[0] = DATA_FRAME_KIND;
  target[1] = bytes.length;
  target.set(bytes, 2);
  return 2 + bytes.length;
}

/** A data frame for `id` carrying a copy of `payload`. */
export function encodeDataFrame(id: string, payload: Uint8Array): Uint8Array {
  if (payload.length > MAX_DATA_PAYLOAD_BYTES) throw new RangeError(`data frame payload of ${payload.length} bytes`);
  const frame = new Uint8Array(dataFrameHeaderBytes(id) + payload.length);
  frame.set(payload, writeDataFrameHeader(frame, id));
  return frame;
}

/** The request id and payload of a binary message (the payload is a view, not a copy), or null if malformed. */
export function decodeDataFrame(frame: Uint8Array): { id: string; payload: Uint8Array } | null {
  if (frame.length < 3 || frame.length > MAX_FRAME_BYTES || frame[0] !== DATA_FRAME_KIND) return null;
  const n = frame[1] as number;
  if (n < 1 || n > MAX_ID_BYTES || frame.length < 2 + n) return null;
  let id = '';
  for (let i = 2; i < 2 + n; i += 1) {
    const code = frame[i] as number;
    if (code < 0x21 || code > 0x7e) return null;
    id += String.fromCharCode(code);
  }
  return { id, payload: frame.subarray(2 + n) };
}
