import { expect, test } from 'vitest';
import { backoffDelay } from './connection';
import { checkGatewayUrl } from './gateway-url';

const b = { initialMs: 500, maxMs: 30_000 };

test('backoff grows exponentially with jitter between half and all of the step', () => {
  expect(backoffDelay(0, b, () => 0)).toBe(250);
  expect(backoffDelay(0, b, () => 1)).toBe(500);
  expect(backoffDelay(3, b, () => 0)).toBe(2000);
  expect(backoffDelay(3, b, () => 1)).toBe(4000);
});

test('backoff is capped', () => {
  expect(backoffDelay(50, b, () => 1)).toBe(30_000);
  expect(backoffDelay(50, b, () => 0)).toBe(15_000);
});

test('plain http is accepted only on loopback or with insecure', () => {
  expect(checkGatewayUrl('http://localhost:8787', false).host).toBe('localhost:8787');
  expect(checkGatewayUrl('http://127.0.0.1:8787', false).host).toBe('127.0.0.1:8787');
  expect(checkGatewayUrl('https://gw.example.com', false).protocol).toBe('https:');
  expect(() => checkGatewayUrl('http://gw.example.com', false)).toThrow(
    expect.objectContaining({ code: 'invalid_params' }),
  );
  expect(checkGatewayUrl('http://gw.example.com', true).protocol).toBe('http:');
  expect(() => checkGatewayUrl('ftp://x', true)).toThrow(expect.objectContaining({ code: 'invalid_params' }));
});
