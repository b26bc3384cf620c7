import { describe, expect, test } from 'vitest';
import {
  DATA_FRAGMENT_BYTES,
  DATA_FRAME_HEADER_BYTES,
  dataFrameFragments,
  decodeDataFragments,
  decodeDataFrame,
  encodeDataFrame,
  MAX_DATA_PAYLOAD_BYTES,
  writeDataFrameHeader,
} from './data-frame';
import { MAX_FRAME_BYTES } from './version';

describe('data frames', () => {
  test('carry a request id and the payload bytes unchanged', () => {
    const payload = new Uint8Array([0, 1, 2, 255, 10, 13]);
    const decoded = decodeDataFrame(encodeDataFrame('r42', payload));
    expect(decoded?.id).toBe('r42');
    expect([...(decoded?.payload ?? [])]).toEqual([...payload]);
  });

  test('can be re-addressed in place to a longer or shorter id without touching the payload', () => {
    const frame = encodeDataFrame('r7', new Uint8Array([9, 8, 7]));
    writeDataFrameHeader(frame, 'r123456');
    expect(decodeDataFrame(frame)).toMatchObject({ id: 'r123456' });
    writeDataFrameHeader(frame, 'x');
    expect(decodeDataFrame(frame)?.id).toBe('x');
    expect([...(decodeDataFrame(frame)?.payload ?? [])]).toEqual([9, 8, 7]);
  });

  test('never exceed the frame limit', () => {
    expect(DATA_FRAME_HEADER_BYTES + MAX_DATA_PAYLOAD_BYTES).toBe(MAX_FRAME_BYTES);
    expect(() => encodeDataFrame('r1', new Uint8Array(MAX_DATA_PAYLOAD_BYTES + 1))).toThrow(RangeError);
  });

  test.each([
    ['too short', new Uint8Array(10)],
    [
      'wrong kind',
      (() => {
        const f = encodeDataFrame('r1', new Uint8Array(1));
        f[0] = 2;
        return f;
      })(),
    ],
    [
      'zero id length',
      (() => {
        const f = encodeDataFrame('r1', new Uint8Array(1));
        f[1] = 0;
        return f;
      })(),
    ],
    [
      'id length over 64',
      (() => {
        const f = encodeDataFrame('r1', new Uint8Array(1));
        f[1] = 65;
        return f;
      })(),
    ],
    [
      'control byte in the id',
      (() => {
        const f = encodeDataFrame('r1', new Uint8Array(1));
        f[2] = 10;
        return f;
      })(),
    ],
  ])('a malformed frame (%s) decodes to null', (_name, frame) => {
    expect(decodeDataFrame(frame)).toBeNull();
  });

  test('ids outside printable ASCII are refused when encoding', () => {
    expect(() => encodeDataFrame('r 1', new Uint8Array(1))).toThrow(RangeError);
    expect(() => encodeDataFrame('', new Uint8Array(1))).toThrow(RangeError);
    expect(() => encodeDataFrame('é', new Uint8Array(1))).toThrow(RangeError);
  });
});

describe('data frames in fragments', () => {
  const payload = Buffer.from(Array.from({ length: 3 * DATA_FRAGMENT_BYTES + 5 }, (_, i) => i % 251));

  test('split into views of at most DATA_FRAGMENT_BYTES and decode back to the same payload', () => {
    const frame = encodeDataFrame('r9', payload);
    const pieces = dataFrameFragments(frame);
    expect(pieces.map((p) => p.length)).toEqual([
      DATA_FRAGMENT_BYTES,
      DATA_FRAGMENT_BYTES,
      DATA_FRAGMENT_BYTES,
      DATA_FRAME_HEADER_BYTES + 5,
    ]);
    expect(pieces[1]?.buffer).toBe(frame.buffer);
    const decoded = decodeDataFragments(pieces.map((p) => Buffer.from(p.buffer, p.byteOffset, p.length)));
    expect(decoded?.id).toBe('r9');
    expect(decoded?.bytes).toBe(payload.length);
    expect(Buffer.concat(decoded?.payload ?? [])).toEqual(payload);
    expect(Buffer.concat(decoded?.frame ?? [])).toEqual(Buffer.from(frame));
  });

  test('a header split across fragments is joined, so the frame can still be re-addressed in place', () => {
    const frame = Buffer.from(encodeDataFrame('r9', payload.subarray(0, 100)));
    const decoded = decodeDataFragments([frame.subarray(0, 10), frame.subarray(10, 70), frame.subarray(70)]);
    expect(decoded?.frame[0]?.length).toBe(DATA_FRAME_HEADER_BYTES);
    expect(Buffer.concat(decoded?.payload ?? [])).toEqual(payload.subarray(0, 100));
    writeDataFrameHeader(decoded?.frame[0] as Buffer, 'r10');
    expect(decodeDataFrame(Buffer.concat(decoded?.frame ?? []))?.id).toBe('r10');
  });

  test('malformed or oversized fragments decode to null', () => {
    expect(decodeDataFragments([Buffer.alloc(10)])).toBeNull();
    const frame = Buffer.from(encodeDataFrame('r1', new Uint8Array(1)));
    frame[0] = 2;
    expect(decodeDataFragments([frame])).toBeNull();
    const big = Buffer.from(encodeDataFrame('r1', new Uint8Array(MAX_DATA_PAYLOAD_BYTES)));
    expect(decodeDataFragments([big, Buffer.alloc(1)])).toBeNull();
  });
});
