import { describe, expect, test } from 'vitest';
import { formatTunnelTarget, intersectTunnelTargets, matchTunnelTarget, parseTunnelTarget } from './tunnel-target';

describe('parseTunnelTarget', () => {
  test.each([
    ['127.0.0.1:5432', '127.0.0.1:5432'],
    ['10.1.2.3/8:443', '10.0.0.0/8:443'],
    ['0.0.0.0/0:*', '0.0.0.0/0:*'],
    ['db.Internal:8000-8099', 'db.internal:8000-8099'],
    ['localhost:1-65535', 'localhost:*'],
    ['[::1]:22', '[::1]:22'],
    ['[FD00::1/8]:443', '[fd00::/8]:443'],
    ['[2001:db8:0:0:1:0:0:1]:80', '[2001:db8::1:0:0:1]:80'],
    ['[::ffff:10.0.0.1]:80', '[::ffff:a00:1]:80'],
  ])('%s is read as %s', (text, canonical) => {
    const parsed = parseTunnelTarget(text);
    expect(parsed && formatTunnelTarget(parsed)).toBe(canonical);
  });

  test.each([
    'db',
    ':443',
    'db:0',
    'db:65536',
    'db:90-80',
    'db:http',
    '10.0.0.0/33:443',
    '256.0.0.1:80',
    '127.1:80',
    '::1:22',
    '[::1::2]:22',
    '[1.2.3.4]:80',
    'db/8:80',
    '-db:80',
    '10.0.0.0/08:80',
  ])('%s is refused', (text) => {
    expect(parseTunnelTarget(text)).toBeUndefined();
  });
});

describe('matchTunnelTarget', () => {
  const targets = ['127.0.0.1:5432', '10.0.0.0/8:443', 'db.internal:6000-6010', '[fd00::/8]:22'];

  test.each([
    ['127.0.0.1', 5432, true],
    ['127.0.0.1', 5433, false],
    ['10.200.3.4', 443, true],
    ['11.0.0.1', 443, false],
    ['DB.internal', 6005, true],
    ['db.internal', 6011, false],
    ['db.internal.', 6005, false],
    ['fd12::1', 22, true],
    ['[fd12::1]', 22, true],
    ['fe80::1', 22, false],
    ['localhost', 5432, false],
    ['10.0.0.0/8', 443, false],
    ['127.0.0.1', 0, false],
  ] as const)('%s:%i → %s', (host, port, expected) => {
    expect(matchTunnelTarget(host, port, targets)).toBe(expected);
  });

  test('a hostname is not resolved to match a CIDR', () => {
    expect(matchTunnelTarget('db.internal', 443, ['0.0.0.0/0:*'])).toBe(false);
  });

  test('an empty list allows nothing', () => {
    expect(matchTunnelTarget('127.0.0.1', 5432, [])).toBe(false);
  });
});

describe('intersectTunnelTargets', () => {
  test.each([
    [['10.0.0.0/8:*'], ['10.1.0.0/16:443'], ['10.1.0.0/16:443']],
    [['10.1.0.0/16:443'], ['10.0.0.0/8:*'], ['10.1.0.0/16:443']],
    [['10.0.0.0/8:400-500'], ['10.0.0.0/8:450-600'], ['10.0.0.0/8:450-500']],
    [['10.0.0.0/8:443'], ['192.168.0.0/16:443'], []],
    [['10.0.0.0/8:443'], ['10.0.0.0/8:80'], []],
    [['db:5432'], ['DB:*'], ['db:5432']],
    [['db:5432'], ['10.0.0.0/8:*'], []],
    [['[fd00::/8]:*'], ['[fd00::1]:22', '10.0.0.1:22'], ['[fd00::1]:22']],
    [['*bad*'], ['0.0.0.0/0:*'], []],
    [[], ['0.0.0.0/0:*'], []],
  ])('%j ∩ %j = %j', (a, b, expected) => {
    expect(intersectTunnelTargets(a, b)).toEqual(expected);
  });

  test('every target in an intersection is allowed by both sides', () => {
    const a = ['10.0.0.0/8:400-500', '127.0.0.1:*'];
    const b = ['10.2.0.0/16:*', '127.0.0.0/8:5432'];
    const both = intersectTunnelTargets(a, b);
    expect(both).toEqual(['10.2.0.0/16:400-500', '127.0.0.1:5432']);
    expect(matchTunnelTarget('10.2.9.9', 450, both)).toBe(true);
    expect(matchTunnelTarget('10.3.9.9', 450, both)).toBe(false);
  });
});
