import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { matchTunnelTarget } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';

/** The two lists a target must pass: the machine's ceiling and the request's policy. */
export interface TunnelLists {
  ceiling: readonly string[];
  policy: readonly string[];
}

/** Resolves a name to its addresses (tests inject their own; the agent uses getaddrinfo through dns.lookup). */
export type ResolveHost = (host: string) => Promise<string[]>;

export const resolveWithSystem: ResolveHost = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Whether one list allows connecting to `address` when asked for `host`. A name pattern ("db.internal:5432")
 * admits that name whatever it resolves to — the admin named it — and an address or CIDR pattern admits the
 * address the name resolved to. A name is never admitted by a CIDR on its own: only its resolved address is.
 */
function allows(list: readonly string[], host: string, address: string, port: number): boolean {
  if (isIP(host) === 0 && matchTunnelTarget(host, port, list)) return true;
  return matchTunnelTarget(address, port, list);
}

/**
 * Picks the address to connect to: the name is resolved HERE, once, and the first address that both lists allow
 * is returned; the caller connects to that address (never to the name again, so a DNS answer that changes between
 * the check and the connect — rebinding — cannot lead elsewhere). Refuses with the layer that said no: the
 * ceiling first (`blocked_by_ceiling`), then the policy (`blocked_by_policy`).
 */
export async function pickTunnelAddress(
  host: string,
  port: number,
  lists: TunnelLists,
  resolve: ResolveHost = resolveWithSystem,
): Promise<string> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  let addresses: string[];
  if (isIP(bare) !== 0) {
    addresses = [bare];
  } else {
    addresses = await resolve(bare).catch(() => []);
    if (addresses.length === 0) {
      throw new LetKiteError('not_found', `"${bare}" does not resolve on this machine`, { host: bare });
    }
  }
  let refusal: LetKiteError | null = null;
  for (const address of addresses) {
    if (!allows(lists.ceiling, bare, address, port)) {
      refusal ??= new LetKiteError(
        'blocked_by_ceiling',
        `this machine's ceiling does not allow tunnels to ${bare}:${port} (${address})`,
        { layer: 'ceiling', key: 'tunnel_targets', host: bare, address, port },
      );
      continue;
    }
    if (!allows(lists.policy, bare, address, port)) {
      refusal ??= new LetKiteError(
        'blocked_by_policy',
        `the policy does not allow tunnels to ${bare}:${port} (${address})`,
        { layer: 'policy', key: 'tunnel_targets', host: bare, address, port },
      );
      continue;
    }
    return address;
  }
  throw refusal ?? new LetKiteError('blocked_by_policy', `no tunnel to ${bare}:${port}`, { layer: 'policy' });
}
