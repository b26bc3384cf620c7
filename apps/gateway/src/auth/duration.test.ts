import { expect, test } from 'vitest';
import { parseDuration } from './duration';

test.each([
  ['90s', 90_000],
  ['10m', 600_000],
  ['12h', 43_200_000],
  ['30d', 2_592_000_000],
])('%s is %d ms', (text, ms) => {
  expect(parseDuration(text)).toBe(ms);
});

test.each(['', '10', '0m', '-1h', '1w', '1.5h', '10 m x'])('"%s" is refused with invalid_params', (text) => {
  expect(() => parseDuration(text)).toThrow(expect.objectContaining({ code: 'invalid_params' }));
});
