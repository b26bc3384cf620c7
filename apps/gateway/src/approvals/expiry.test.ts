import { DEFAULT_APPROVAL_TIMEOUT_MS } from '@letkite/policy';
import { expect, test } from 'vitest';
import { LocalCoordination } from '../coordination/local-coordination';
import { approvalExpiresAt, isLive, startExpirySweeper } from './expiry';

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

test('of two gateways only the lease holder sweeps; when it stops, the other takes over', async () => {
  const coordination = new LocalCoordination();
  const sweeps: string[] = [];
  const start = (who: string) =>
    startExpirySweeper({
      expireDue: async () => void sweeps.push(who),
      lease: coordination.lease('approvals.expiry', 1000),
      now: () => new Date(),
      log: () => {},
      everyMs: 20,
    });
  const stopA = start('a');
  await new Promise((r) => setTimeout(r, 5));
  const stopB = start('b');
  await new Promise((r) => setTimeout(r, 150));
  expect(sweeps.length).toBeGreaterThan(2);
  expect(new Set(sweeps)).toEqual(new Set(['a']));
  await stopA();
  sweeps.length = 0;
  await new Promise((r) => setTimeout(r, 150));
  expect(sweeps.length).toBeGreaterThan(2);
  expect(new Set(sweeps)).toEqual(new Set(['b']));
  await stopB();
  await coordination.close();
});
