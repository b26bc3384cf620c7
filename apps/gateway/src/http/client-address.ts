import { BlockList, isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';

/** Who sent a request, as far as the gateway can tell: the address rate limits, logs and audit use. */
export interface ClientInfo {
  /** The client's IP address ('' when unknown). */
  address: string;
  /** `https` or `http` as the client used it: the socket's, or what a trusted proxy forwarded. */
  proto: 'http' | 'https';
  /** True when the address (or proto) came from a forwarding header of a trusted proxy. */
  forwarded: boolean;
}

/**
 * The proxies whose X-Forwarded-For / X-Forwarded-Proto / Forwarded headers count (LETKITE_TRUSTED_PROXIES, a
 * comma-separated list of addresses and CIDR ranges). Empty by default: then every forwarding header is ignored,
 * since anyone can send one.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  private constructor(readonly ranges: readonly string[]) {
    for (const r of ranges) {
      const [net, bits] = r.split('/') as [string, string | undefined];
      const family = isIP(net) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.list.addAddress(net, family);
      else this.list.addSubnet(net, Number(bits), family);
    }
  }

  /** No proxy is trusted. */
  static readonly none = new TrustedProxies([]);

  /**
   * Parses `10.0.0.0/8, 127.0.0.1, ::1, fd00::/8`. Returns every bad entry rather than the first, so the operator
   * fixes them in one go.
   */
  static parse(text: string | undefined): { ok: true; proxies: TrustedProxies } | { ok: false; problems: string[] } {
    const entries = (text ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    const problems = entries.filter((e) => !validRange(e)).map((e) => `"${e}" is not an IP address or CIDR range`);
    if (problems.length > 0) return { ok: false, problems };
    return { ok: true, proxies: entries.length === 0 ? TrustedProxies.none : new TrustedProxies(entries) };
  }

  get isEmpty(): boolean {
    return this.ranges.length === 0;
  }

  /** Whether a hop at this address is one of ours. */
  contains(address: string): boolean {
    const a = normalizeAddress(address);
    const family = isIP(a);
    if (family === 0) return false;
    return this.list.check(a, family === 6 ? 'ipv6' : 'ipv4');
  }
}

function validRange(entry: string): boolean {
  const [net, bits, extra] = entry.split('/');
  if (extra !== undefined || net === undefined) return false;
  const family = isIP(net);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 6 ? 128 : 32);
}

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) is 10.0.0.1; zone ids are dropped. */
export function normalizeAddress(address: string): string {
  const a = address.trim().replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  return mapped ? (mapped[1] as string) : a;
}

/** One hop of a forwarding header: its address and, for `Forwarded`, the proto it names. */
interface Hop {
  address: string;
  proto?: string;
}

/** `Forwarded: for=192.0.2.60;proto=https, for="[2001:db8::1]:4711"` (RFC 7239) as hops, left to right. */
function forwardedHops(header: string): Hop[] {
  return header.split(',').map((element) => {
    const hop: Hop = { address: '' };
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      const key = pair.slice(0, eq).trim().toLowerCase();
      const value = pair
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (key === 'for') hop.address = hostOnly(value);
      if (key === 'proto') hop.proto = value.toLowerCase();
    }
    return hop;
  });
}

/** `[2001:db8::1]:4711` → `2001:db8::1`, `192.0.2.60:80` → `192.0.2.60`; anything else as it is. */
function hostOnly(value: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) return bracketed[1] as string;
  const v4port = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(value);
  return v4port ? (v4port[1] as string) : value;
}

/**
 * The real client behind any trusted proxies. Forwarding headers count only when the socket peer is a trusted
 * proxy; then the chain (header hops, then the peer) is walked from the right, skipping trusted hops, and the first
 * untrusted one is the client: everything left of it was written by the client itself and proves nothing. A hop
 * that is not an IP address (`unknown`, an obfuscated name) ends the walk there, at the last trusted hop.
 * `Forwarded` wins over `X-Forwarded-For` when a proxy sends both.
 */
export function resolveClient(
  peer: { address: string; proto: 'http' | 'https' },
  header: (name: string) => string | undefined,
  trusted: TrustedProxies,
): ClientInfo {
  const direct: ClientInfo = { address: normalizeAddress(peer.address), proto: peer.proto, forwarded: false };
  if (trusted.isEmpty || !trusted.contains(peer.address)) return direct;
  const forwarded = header('forwarded');
  const xff = header('x-forwarded-for');
  let hops: Hop[];
  if (forwarded !== undefined && forwarded.trim() !== '') hops = forwardedHops(forwarded);
  else if (xff !== undefined && xff.trim() !== '') hops = xff.split(',').map((a) => ({ address: hostOnly(a.trim()) }));
  else hops = [];
  let client: ClientInfo = { ...direct };
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as Hop;
    const address = normalizeAddress(hop.address);
    if (isIP(address) === 0) break;
    client = { address, proto: client.proto, forwarded: true };
    if (hop.proto === 'https' || hop.proto === 'http') client.proto = hop.proto;
    if (!trusted.contains(address)) break;
  }
  if (forwarded === undefined || forwarded.trim() === '') {
    // X-Forwarded-Proto: the value our trusted peer set (the rightmost, as proxies that append add theirs last).
    const xfp = header('x-forwarded-proto')?.split(',').pop()?.trim().toLowerCase();
    if (xfp === 'https' || xfp === 'http') client = { ...client, proto: xfp, forwarded: true };
  }
  return client;
}

const CLIENT_KEY = 'letkite.client';

/** Resolves each request's client once (before anything else uses it) with the configured trusted proxies. */
export function clientAddressMiddleware(trusted: TrustedProxies): MiddlewareHandler {
  return async (c, next) => {
    c.set(CLIENT_KEY as never, resolveClient(socketPeer(c), (n) => c.req.header(n), trusted) as never);
    await next();
  };
}

/**
 * The request's client: what the middleware resolved, else the socket peer alone (no header is believed without
 * the middleware's trusted-proxy list: fail closed).
 */
export function clientOf(c: Context): ClientInfo {
  const set = c.get(CLIENT_KEY as never) as ClientInfo | undefined;
  if (set) return set;
  const peer = socketPeer(c);
  return { address: normalizeAddress(peer.address), proto: peer.proto, forwarded: false };
}

/** The TCP peer of this request (the proxy's address, behind one); '' outside a node server (app.request tests). */
function socketPeer(c: Context): { address: string; proto: 'http' | 'https' } {
  let address = '';
  try {
    address = getConnInfo(c).remote.address ?? '';
  } catch {
    // No node socket (a test calling app.request): unknown.
  }
  return { address, proto: new URL(c.req.url).protocol === 'https:' ? 'https' : 'http' };
}
