import { z } from 'zod';
import { agentOp } from './agent-op';

/**
 * The agent's tunnel operation: `tunnel_connect` opens ONE TCP connection from the machine to a target and carries
 * its bytes both ways until either side closes. Each connection a tunnel forwards (one HTTP request through
 * `/t/<id>/`, one TCP client on the gateway's port) is its own `tunnel_connect` request, so closing one never
 * touches another, and cancelling the request (the tunnel closed, the client left) destroys the socket.
 *
 * The stream, for one request id:
 *
 *   agent → gateway   credit {bytes}       the connection is up; the gateway may push this much (and more as the
 *                                          agent writes it out to the target)
 *   either way        <binary data>        the connection's bytes (data frames, data-frame.ts)
 *   gateway → agent   stream_end {sha256}  the client finished sending (TCP half-close); the digest of every byte
 *                                          the gateway pushed, which the agent checks before it shuts its write side
 *   agent → gateway   entry_end {bytes, sha256}
 *                                          the target finished sending (half-close): how many bytes and their digest
 *   agent → gateway   response {address, port, bytes_in, bytes_out}
 *                                          the connection closed both ways
 *
 * Flow control is by credit both ways: the agent may have at most `window_bytes` (granted by the gateway in the
 * params, topped up by `credit` frames as the gateway's reader drains) unacknowledged; the gateway at most what the
 * agent granted. Neither side buffers more than one window per connection, however slow the reader.
 */

/** Bytes per data frame of a tunnel: small enough for interactive latency, large enough for throughput. */
export const TUNNEL_CHUNK_BYTES = 64 * 1024;

/** The credit each side grants the other by default. */
export const TUNNEL_WINDOW_BYTES = 16 * TUNNEL_CHUNK_BYTES;

/** The largest window either side may grant (an agent refuses credit past it: a rogue cannot make it buffer more). */
export const MAX_TUNNEL_WINDOW_BYTES = 8 * 1024 * 1024;

export const tunnelKinds = ['http', 'tcp'] as const;
/** `http`: a shared web service the gateway serves at /t/<id>/; `tcp`: a port the gateway listens on and forwards. */
export const TunnelKind = z.enum(tunnelKinds);
export type TunnelKind = z.infer<typeof TunnelKind>;

export const TunnelConnectParams = z.object({
  /** A hostname (resolved ON the agent; the resolved address is what is checked and connected to) or an IP literal. */
  host: z.string().min(1).max(253),
  port: z.number().int().min(1).max(65535),
  /** The credit the gateway grants the agent for what it streams back (default TUNNEL_WINDOW_BYTES). */
  window_bytes: z.number().int().min(TUNNEL_CHUNK_BYTES).max(MAX_TUNNEL_WINDOW_BYTES).optional(),
});
export type TunnelConnectParams = z.infer<typeof TunnelConnectParams>;

export const TunnelConnectResult = z.object({
  /** The address the agent connected to (after resolving the host). */
  address: z.string(),
  port: z.number().int(),
  /** Bytes the gateway sent to the target, and the target sent back. */
  bytes_in: z.number().int().min(0),
  bytes_out: z.number().int().min(0),
});
export type TunnelConnectResult = z.infer<typeof TunnelConnectResult>;

/**
 * Splits "host:port" (IPv6 in brackets) into its parts; undefined when it is not one. The host is lowercased
 * and a bracketed IPv6 address loses its brackets.
 */
export function splitTunnelTarget(target: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s/]+)):([1-9]\d{0,4})$/.exec(target);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  const host = (m[1] ?? m[2] ?? '').toLowerCase();
  return host === '' ? undefined : { host, port };
}

/** This module's agent operations (agent-ops.ts joins every module's into `agentOps`). */
export const tunnelOps = {
  tunnel_connect: agentOp(TunnelConnectParams, TunnelConnectResult, 'stream'),
} as const;
