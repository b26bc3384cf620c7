import { expect, test } from 'vitest';
import { sandboxSupportFor } from './platform';

test.each([
  ['linux', { supported: true, mechanism: 'landlock' }],
  ['darwin', { supported: true, mechanism: 'seatbelt' }],
  ['win32', { supported: false }],
  ['freebsd', { supported: false }],
] as const)('sandboxed shells on %s', (platform, expected) => {
  expect(sandboxSupportFor(platform)).toMatchObject(expected);
});

test('Windows refuses sandboxed shells and says it supports only off and full', () => {
  const support = sandboxSupportFor('win32');
  expect(support.supported).toBe(false);
  if (!support.supported) expect(support.reason).toMatch(/"off" or "full"/);
});
