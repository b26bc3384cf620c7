import { z } from 'zod';

/**
 * Tunnel targets: `host:port`, `IP:port`, `CIDR:port`; IPv6 in brackets (`[::1]:5432`, `[fd00::/8]:443`). The
 * port is a number, a range `8000-8099`, or `*`. A hostname matches only that hostname (case-insensitive): it
 * is not resolved to check it against a CIDR, so allowing `10.0.0.0/8:443` does not allow `db.internal:443`.
 */
export interface ParsedTunnelTarget {
  kind: 'host' | 'ipv4' | 'ipv6';
  /** Lowercased hostname, or the network address as a number. */
  host: string;
  network: bigint;
  prefix: number;
  portLow: number;
  portHigh: number;
}

const HOSTNAME_RE =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/i;

function parseIPv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseIPv6(text: string): bigint | undefined {
  let head = text;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    const v4 = parseIPv4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = [Number(v4 >> 16n), Number(v4 & 0xffffn)];
    head = text.slice(0, lastColon + 1);
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const toGroups = (s: string): number[] | undefined => {
    if (s === '') return [];
    const groups = s.split(':');
    if (groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined;
    return groups.map((g) => Number.parseInt(g, 16));
  };
  const left = toGroups(halves[0] ?? '');
  const right = halves.length === 2 ? toGroups(halves[1] ?? '') : [];
  if (!left || !right) return undefined;
  const explicit = left.length + right.length + tail.length;
  let groups: number[];
  if (halves.length === 2) {
    if (explicit > 7) return undefined;
    groups = [...left, ...new Array<number>(8 - explicit).fill(0), ...right, ...tail];
  } else {
    if (explicit !== 8) return undefined;
    groups = [...left, ...tail];
  }
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function formatIPv6(value: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(16 * (7 - i))) & 0xffffn));
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

function formatIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

function parsePorts(text: string): [number, number] | undefined {
  if (text === '*') return [1, 65535];
  const m = /^([1-9]\d{0,4})(?:-([1-9]\d{0,4}))?$/.exec(text);
  if (!m) return undefined;
  const low = Number(m[1]);
  const high = m[2] === undefined ? low : Number(m[2]);
  return low <= high && high <= 65535 ? [low, high] : undefined;
}

function parseAddress(text: string): Omit<ParsedTunnelTarget, 'portLow' | 'portHigh'> | undefined {
  const bracketed = text.startsWith('[') && text.endsWith(']');
  const body = bracketed ? text.slice(1, -1) : text;
  const [address = '', prefixText, ...rest] = body.split('/');
  if (rest.length > 0) return undefined;
  const v4 = bracketed ? undefined : parseIPv4(address);
  const v6 = bracketed ? parseIPv6(address) : undefined;
  const bits = v4 !== undefined ? 32 : v6 !== undefined ? 128 : 0;
  if (bits === 0) {
    // All-numeric labels that are not a valid IPv4 address (`127.1`, `999.0.0.1`) are refused, not taken as names.
    if (bracketed || prefixText !== undefined || !HOSTNAME_RE.test(address) || /^[\d.]+$/.test(address)) {
      return undefined;
    }
    return { kind: 'host', host: address.toLowerCase(), network: 0n, prefix: 0 };
  }
  if (prefixText !== undefined && !/^(0|[1-9]\d{0,2})$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return undefined;
  const mask = ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  const network = (v4 ?? v6 ?? 0n) & mask;
  return { kind: bits === 32 ? 'ipv4' : 'ipv6', host: '', network, prefix };
}

/** Parses a tunnel target pattern; `undefined` when it is not one. Host bits of a CIDR are masked off. */
export function parseTunnelTarget(text: string): ParsedTunnelTarget | undefined {
  const colon = text.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const address = parseAddress(text.slice(0, colon));
  const ports = parsePorts(text.slice(colon + 1));
  if (!address || !ports) return undefined;
  return { ...address, portLow: ports[0], portHigh: ports[1] };
}

/** The canonical text of a parsed target (`10.0.0.0/8:443`, `[fd00::/8]:1-65535` is written `…:*`). */
export function formatTunnelTarget(t: ParsedTunnelTarget): string {
  const ports =
    t.portLow === 1 && t.portHigh === 65535
      ? '*'
      : t.portLow === t.portHigh
        ? `${t.portLow}`
        : `${t.portLow}-${t.portHigh}`;
  if (t.kind === 'host') return `${t.host}:${ports}`;
  if (t.kind === 'ipv4') return `${formatIPv4(t.network)}${t.prefix === 32 ? '' : `/${t.prefix}`}:${ports}`;
  return `[${formatIPv6(t.network)}${t.prefix === 128 ? '' : `/${t.prefix}`}]:${ports}`;
}

export const TunnelTarget = z
  .string()
  .min(1)
  .max(300)
  .superRefine((text, ctx) => {
    if (!parseTunnelTarget(text)) {
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(text)} is not host:port, IP:port or CIDR:port (port: N, N-M or *; IPv6 in [ ])`,
      });
    }
  });
export type TunnelTarget = z.infer<typeof TunnelTarget>;

/** The part two parsed targets have in common, or `undefined`. */
function intersectParsed(a: ParsedTunnelTarget, b: ParsedTunnelTarget): ParsedTunnelTarget | undefined {
  const portLow = Math.max(a.portLow, b.portLow);
  const portHigh = Math.min(a.portHigh, b.portHigh);
  if (portLow > portHigh || a.kind !== b.kind) return undefined;
  if (a.kind === 'host') return a.host === b.host ? { ...a, portLow, portHigh } : undefined;
  const bits = a.kind === 'ipv4' ? 32 : 128;
  const [wide, narrow] = a.prefix <= b.prefix ? [a, b] : [b, a];
  const mask = ((1n << BigInt(wide.prefix)) - 1n) << BigInt(bits - wide.prefix);
  return (narrow.network & mask) === wide.network ? { ...narrow, portLow, portHigh } : undefined;
}

/** Whether `host:port` is allowed by some target in the list. `host` is a hostname or an IP literal. */
export function matchTunnelTarget(host: string, port: number, targets: readonly string[]): boolean {
  if (!Number.isInteger(port) || port < 1 || port > 65535) return false;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const asked = parseTunnelTarget(bare.includes(':') ? `[${bare}]:${port}` : `${bare}:${port}`);
  if (!asked || asked.prefix !== (asked.kind === 'ipv4' ? 32 : asked.kind === 'ipv6' ? 128 : 0)) return false;
  return targets.some((text) => {
    const target = parseTunnelTarget(text);
    if (!target) return false;
    const common = intersectParsed(asked, target);
    return common !== undefined && common.prefix === asked.prefix && common.portLow === port;
  });
}

/**
 * The targets allowed by both lists, canonical and without duplicates: every pairwise intersection (a CIDR
 * inside a wider one, overlapping port ranges). Unparseable entries contribute nothing.
 */
export function intersectTunnelTargets(a: readonly string[], b: readonly string[]): string[] {
  const out = new Set<string>();
  for (const x of a) {
    const px = parseTunnelTarget(x);
    if (!px) continue;
    for (const y of b) {
      const py = parseTunnelTarget(y);
      const common = py && intersectParsed(px, py);
      if (common) out.add(formatTunnelTarget(common));
    }
  }
  return [...out];
}
