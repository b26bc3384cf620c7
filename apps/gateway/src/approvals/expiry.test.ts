import { DEFAULT_APPROVAL_TIMEOUT_MS } from '@letkite/policy';
import { expect, test } from 'vitest';
import { approvalExpiresAt, isLive } from './expiry';

const now = new Date('2030-01-01T00:00:00.000Z');

test('the default timeout is ten minutes', () => {
  expect(approvalExpiresAt(now, DEFAULT_APPROVAL_TIMEOUT_MS).toISOString()).toBe('2030-01-01T00:10:00.000Z');
});

test.each([
  [0, '2030-01-01T00:01:00.000Z'],
  [30_000, '2030-01-01T00:01:00.000Z'],
  [90 * 60_000, '2030-01-01T01:30:00.000Z'],
  [48 * 3_600_000, '2030-01-02T00:00:00.000Z'],
])('a timeout of %d ms is kept within 1 minute .. 24 hours', (ms, expected) => {
  expect(approvalExpiresAt(now, ms).toISOString()).toBe(expected);
});

test('a request is late at its expiry instant and after', () => {
  const at = '2030-01-01T00:10:00.000Z';
  expect(isLive(at, new Date('2030-01-01T00:09:59.999Z'))).toBe(true);
  expect(isLive(at, new Date(at))).toBe(false);
  expect(isLive(at, new Date('2030-01-01T00:10:00.001Z'))).toBe(false);
});
