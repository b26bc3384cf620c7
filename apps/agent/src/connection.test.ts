import { describe, expect, test } from 'vitest';
import { backoffDelay, gatewayCandidates } from './connection';
import { checkGatewayUrl } from './gateway-url';

const b = { initialMs: 500, maxMs: 30_000 };

test('backoff grows exponentially with full jitter: anywhere from nothing to all of the step', () => {
  expect(backoffDelay(0, b, () => 0)).toBe(0);
  expect(backoffDelay(0, b, () => 1)).toBe(500);
  expect(backoffDelay(3, b, () => 0.5)).toBe(2000);
  expect(backoffDelay(3, b, () => 1)).toBe(4000);
});

test('backoff is capped', () => {
  expect(backoffDelay(50, b, () => 1)).toBe(30_000);
  expect(backoffDelay(50, b, () => 0.5)).toBe(15_000);
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

describe('the gateways an agent dials (cluster mode)', () => {
  const base = {
    machine_id: 'm',
    name: 'n',
    private_key_pem: 'k',
    insecure: false,
    gateway_public_key: 'p',
  };

  test('the joined URL first, then the named ones once each', () => {
    const state = { ...base, gateway_url: 'http://localhost:1' };
    expect(gatewayCandidates(state, ['http://localhost:1', 'http://localhost:2', 'http://localhost:2'])).toEqual([
      'http://localhost:1',
      'http://localhost:2',
    ]);
    // One gateway whether or not its URL ends in a slash.
    expect(gatewayCandidates({ ...state, gateway_url: 'http://localhost:1/' }, ['http://localhost:1'])).toEqual([
      'http://localhost:1/',
    ]);
    expect(gatewayCandidates({ ...state, gateways: ['http://127.0.0.1:3'] })).toEqual([
      'http://localhost:1',
      'http://127.0.0.1:3',
    ]);
  });

  test('fails closed: no downgrade from https, no plain http off loopback, nothing that is not http(s)', () => {
    const https = { ...base, gateway_url: 'https://gw.example.com', gateway_tls_pin: 'pin' };
    expect(gatewayCandidates(https, ['http://localhost:2', 'https://gw2.example.com', 'ftp://x', 'not a url'])).toEqual(
      ['https://gw.example.com', 'https://gw2.example.com'],
    );
    const local = { ...base, gateway_url: 'http://localhost:1' };
    expect(gatewayCandidates(local, ['http://gw.example.com'])).toEqual(['http://localhost:1']);
  });
});
