import { isLetKiteError } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { pickTunnelAddress, type ResolveHost } from './target-check';

const resolver =
  (table: Record<string, string[]>): ResolveHost =>
  async (host) =>
    table[host] ?? [];

async function codeOf(p: Promise<unknown>): Promise<{ code: string; layer?: unknown }> {
  try {
    await p;
    return { code: 'ok' };
  } catch (err) {
    if (!isLetKiteError(err)) throw err;
    return { code: err.code, layer: (err.details as { layer?: unknown } | undefined)?.layer };
  }
}

describe('the agent picks the address a tunnel connects to', () => {
  const lists = {
    ceiling: ['10.0.0.0/8:*', '127.0.0.1:5432', 'db.internal:443'],
    policy: ['10.0.0.0/8:443', 'db.internal:443'],
  };

  test.each([
    ['an allowed address', '10.1.2.3', 443, { code: 'ok' }],
    ['an address the ceiling does not list', '192.168.1.1', 443, { code: 'blocked_by_ceiling', layer: 'ceiling' }],
    ['a port only the ceiling allows', '10.1.2.3', 80, { code: 'blocked_by_policy', layer: 'policy' }],
    ['loopback the policy does not list', '127.0.0.1', 5432, { code: 'blocked_by_policy', layer: 'policy' }],
  ])('%s', async (_what, host, port, expected) => {
    expect(await codeOf(pickTunnelAddress(host as string, port as number, lists, resolver({})))).toEqual(expected);
  });

  test('a name both lists name is allowed, and the connection goes to the address it resolved to', async () => {
    const address = await pickTunnelAddress('db.internal', 443, lists, resolver({ 'db.internal': ['172.16.0.9'] }));
    expect(address).toBe('172.16.0.9');
  });

  test('a name resolving to a forbidden address is refused, though a CIDR would admit another answer', async () => {
    const r = await codeOf(pickTunnelAddress('localhost', 443, lists, resolver({ localhost: ['127.0.0.1', '::1'] })));
    expect(r).toEqual({ code: 'blocked_by_ceiling', layer: 'ceiling' });
  });

  test('of several addresses, the first one allowed is the one connected to', async () => {
    const address = await pickTunnelAddress(
      'mixed.example',
      443,
      lists,
      resolver({ 'mixed.example': ['127.0.0.1', '10.9.9.9', '10.1.1.1'] }),
    );
    expect(address).toBe('10.9.9.9');
  });

  test('the name is resolved once: a second, rebound answer never counts', async () => {
    let calls = 0;
    const rebinding: ResolveHost = async () => {
      calls += 1;
      return calls === 1 ? ['10.0.0.7'] : ['127.0.0.1'];
    };
    expect(await pickTunnelAddress('rebind.example', 443, lists, rebinding)).toBe('10.0.0.7');
    expect(calls).toBe(1);
  });

  test('a name that does not resolve is not_found', async () => {
    expect(await codeOf(pickTunnelAddress('nowhere.invalid', 443, lists, resolver({})))).toEqual({
      code: 'not_found',
      layer: undefined,
    });
  });

  test('an empty list allows nothing', async () => {
    const r = await codeOf(pickTunnelAddress('10.1.2.3', 443, { ceiling: [], policy: ['10.0.0.0/8:*'] }, resolver({})));
    expect(r.code).toBe('blocked_by_ceiling');
  });
});
