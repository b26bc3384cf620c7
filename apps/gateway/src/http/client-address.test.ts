import { describe, expect, test } from 'vitest';
import { resolveClient, TrustedProxies } from './client-address';

function trusted(text: string): TrustedProxies {
  const r = TrustedProxies.parse(text);
  if (!r.ok) throw new Error(r.problems.join('; '));
  return r.proxies;
}

function resolve(peer: string, headers: Record<string, string>, list: string, proto: 'http' | 'https' = 'http') {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return resolveClient({ address: peer, proto }, (n) => lower[n], trusted(list));
}

describe('the client address behind trusted proxies', () => {
  test.each([
    [
      'no trusted proxy: a spoofed X-Forwarded-For is ignored',
      '127.0.0.1',
      { 'X-Forwarded-For': '6.6.6.6' },
      '',
      '127.0.0.1',
    ],
    [
      'an untrusted peer: its headers are ignored',
      '198.51.100.9',
      { 'X-Forwarded-For': '6.6.6.6' },
      '10.0.0.0/8',
      '198.51.100.9',
    ],
    ['a trusted peer: the hop it names', '10.0.0.2', { 'X-Forwarded-For': '203.0.113.7' }, '10.0.0.0/8', '203.0.113.7'],
    [
      'the rightmost untrusted hop, not what the client wrote on the left',
      '10.0.0.2',
      { 'X-Forwarded-For': '6.6.6.6, 203.0.113.7, 10.0.0.5' },
      '10.0.0.0/8',
      '203.0.113.7',
    ],
    [
      'all hops trusted: the leftmost',
      '10.0.0.2',
      { 'X-Forwarded-For': '10.1.1.1, 10.0.0.5' },
      '10.0.0.0/8',
      '10.1.1.1',
    ],
    [
      'a garbage hop stops the walk at the last trusted one',
      '10.0.0.2',
      { 'X-Forwarded-For': 'evil, 10.0.0.5' },
      '10.0.0.0/8',
      '10.0.0.5',
    ],
    [
      'an IPv4-mapped peer matches an IPv4 range',
      '::ffff:127.0.0.1',
      { 'X-Forwarded-For': '203.0.113.7' },
      '127.0.0.1',
      '203.0.113.7',
    ],
    ['IPv6 ranges', '::1', { 'X-Forwarded-For': '2001:db8::5' }, '::1/128', '2001:db8::5'],
    [
      'Forwarded (RFC 7239) wins over X-Forwarded-For',
      '10.0.0.2',
      { Forwarded: 'for=6.6.6.6, for="[2001:db8::1]:4711";proto=https', 'X-Forwarded-For': '9.9.9.9' },
      '10.0.0.0/8',
      '2001:db8::1',
    ],
    ['Forwarded with a port', '10.0.0.2', { Forwarded: 'for=192.0.2.60:8080;proto=http' }, '10.0.0.0/8', '192.0.2.60'],
  ])('%s', (_name, peer, headers, list, expected) => {
    expect(resolve(peer, headers, list).address).toBe(expected);
  });

  test('X-Forwarded-Proto counts only from a trusted peer', () => {
    expect(resolve('198.51.100.9', { 'X-Forwarded-Proto': 'https' }, '10.0.0.0/8').proto).toBe('http');
    expect(resolve('10.0.0.2', { 'X-Forwarded-Proto': 'https' }, '10.0.0.0/8').proto).toBe('https');
    expect(resolve('10.0.0.2', { Forwarded: 'for=203.0.113.7;proto=https' }, '10.0.0.0/8')).toEqual({
      address: '203.0.113.7',
      proto: 'https',
      forwarded: true,
    });
  });

  test('every bad entry of LETKITE_TRUSTED_PROXIES is reported', () => {
    const r = TrustedProxies.parse('10.0.0.0/8, bogus, 10.0.0.0/33, ::1/129, 1.2.3.4/8/1');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems).toHaveLength(4);
    expect(TrustedProxies.parse(' ').ok).toBe(true);
  });
});
