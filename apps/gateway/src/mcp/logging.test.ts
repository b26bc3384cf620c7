import { expect, test } from 'vitest';
import { levelOfOutcome, passes, sessionLogger } from './logging';

test('a message passes at or above the session level, and never without one', () => {
  expect(passes('info', undefined)).toBe(false);
  expect(passes('info', 'info')).toBe(true);
  expect(passes('debug', 'info')).toBe(false);
  expect(passes('error', 'warning')).toBe(true);
  expect(passes('emergency', 'nonsense')).toBe(false);
});

test('outcomes map to levels: refusals warn, gateway and machine failures are errors', () => {
  expect(levelOfOutcome('ok')).toBe('info');
  expect(levelOfOutcome('approval_pending')).toBe('info');
  expect(levelOfOutcome('blocked_by_policy')).toBe('warning');
  expect(levelOfOutcome('machine_offline')).toBe('error');
});

test('the logger sends only what passes, and a failed send does not throw', async () => {
  const sent: unknown[] = [];
  const log = sessionLogger('warning', async (n) => {
    sent.push(n);
    if (sent.length > 1) throw new Error('stream gone');
  });
  await log('info', { event: 'x' });
  await log('warning', { event: 'y' });
  await log('error', { event: 'z' });
  expect(sent).toEqual([
    { method: 'notifications/message', params: { level: 'warning', logger: 'letkite', data: { event: 'y' } } },
    { method: 'notifications/message', params: { level: 'error', logger: 'letkite', data: { event: 'z' } } },
  ]);
});
