import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a server-side fetch of a client-ID metadata document may reach: only globally routable unicast.
 * A URL supplied by an unauthenticated client must not make the gateway talk to itself, the cloud metadata
 * service or the private network (SSRF).
 */
export const addressClasses = [
  'public',
  'loopback',
  'private',
  'link_local',
  'multicast',
  'unspecified',
  'reserved',
  'invalid',
] as const;
export type AddressClass = (typeof addressClasses)[number];

function blockList(entries: [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix, family] of entries) list.addSubnet(net, prefix, family);
  return list;
}

const ranges: [AddressClass, BlockList][] = [
  [
    'unspecified',
    blockList([
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
  ],
  [
    'loopback',
    blockList([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
  ],
  [
    'private',
    blockList([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT (and Tailscale)
      ['fc00::', 7, 'ipv6'], // unique local
    ]),
  ],
  [
    'link_local',
    blockList([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
  ],
  [
    'multicast',
    blockList([
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ]),
  ],
  [
    'reserved',
    blockList([
      ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
      ['192.0.2.0', 24, 'ipv4'], // documentation
      ['198.18.0.0', 15, 'ipv4'], // benchmarking
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'], // reserved, and 255.255.255.255 broadcast
      ['2001:db8::', 32, 'ipv6'], // documentation
      ['100::', 64, 'ipv6'], // discard
      ['2001::', 23, 'ipv6'], // IETF protocol assignments (Teredo, ORCHID …)
      ['fec0::', 10, 'ipv6'], // deprecated site-local
    ]),
  ],
];

/** IPv6 forms that embed an IPv4 address; the embedded address is what the packet really reaches. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const mapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(?:0{1,4}:)?(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped?.[1]) return mapped[1];
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hexMapped?.[1] && hexMapped[2]) {
    const hi = Number.parseInt(hexMapped[1], 16);
    const lo = Number.parseInt(hexMapped[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  // NAT64 (64:ff9b::/96) carries an IPv4 address the gateway may end up reaching; 6to4 is refused outright below.
  const nat64 = /^64:ff9b::(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (nat64?.[1]) return nat64[1];
  return null;
}

/** Classifies one literal IP address (v4 or v6). Anything that is not a valid address is `invalid`. */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address);
  if (family === 0) return 'invalid';
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== null) return classifyAddress(v4);
    if (/^2002:/i.test(address)) return 'reserved';
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [cls, list] of ranges) if (list.check(address, type)) return cls;
  return 'public';
}
