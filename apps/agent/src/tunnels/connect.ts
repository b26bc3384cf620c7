import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import {
  type AgentFrame,
  DATA_FRAME_HEADER_BYTES,
  LetKiteError,
  type ParsedAgentOpParams,
  type RequestContext,
  type TunnelConnectResult,
  writeDataFrameHeader,
} from '@letkite/protocol';
import { MAX_TUNNEL_WINDOW_BYTES, TUNNEL_CHUNK_BYTES, TUNNEL_WINDOW_BYTES } from '@letkite/protocol/ops-tunnel';
import type { CeilingState } from '../ceiling/ceiling-source';
import { requestPolicy } from '../guard/request-policy';
import type { RequestStream } from '../request-stream';
import { pickTunnelAddress, type ResolveHost, resolveWithSystem } from './target-check';

/** One request's way out (as for transfers): JSON frames, binary frames, the gateway's events, cancellation. */
export interface TunnelSide {
  id: string;
  send: (frame: AgentFrame) => void;
  stream: RequestStream;
  signal: AbortSignal;
}

/** A target that does not accept within this long answers `timeout`. */
export const TUNNEL_CONNECT_TIMEOUT_MS = 10_000;

/**
 * tunnel_connect: checks the target against the ceiling and the request's policy (after resolving it here),
 * connects to the checked address and carries bytes both ways with credit flow control (ops-tunnel.ts) until the
 * connection closes or the request is cancelled. The gateway's credit is never trusted past
 * MAX_TUNNEL_WINDOW_BYTES, and data it pushes past the credit this side granted is a protocol error: a rogue
 * gateway can make the agent buffer at most one window per connection.
 */
export async function tunnelConnect(
  params: ParsedAgentOpParams<'tunnel_connect'>,
  context: RequestContext,
  ceiling: CeilingState,
  side: TunnelSide,
  resolve: ResolveHost = resolveWithSystem,
): Promise<TunnelConnectResult> {
  const rp = requestPolicy(context.policy, ceiling);
  const address = await pickTunnelAddress(
    params.host,
    params.port,
    { ceiling: rp.ceiling.tunnel_targets, policy: rp.policy.tunnel_targets },
    resolve,
  );
  if (side.signal.aborted) throw new LetKiteError('timeout', 'the tunnel connection was cancelled');
  const socket = await open(address, params.port, side.signal);
  return pump(socket, address, params.port, params.window_bytes ?? TUNNEL_WINDOW_BYTES, side);
}

function open(address: string, port: number, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, noDelay: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new LetKiteError('timeout', `${address}:${port} did not accept within ${TUNNEL_CONNECT_TIMEOUT_MS} ms`));
    }, TUNNEL_CONNECT_TIMEOUT_MS);
    const onAbort = () => {
      socket.destroy();
      reject(new LetKiteError('timeout', 'the tunnel connection was cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(socket);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(
        new LetKiteError('not_found', `nothing accepts connections at ${address}:${port} (${err.code ?? 'error'})`, {
          address,
          port,
          reason: err.code ?? 'error',
        }),
      );
    });
  });
}

function pump(
  socket: Socket,
  address: string,
  port: number,
  sendWindow: number,
  side: TunnelSide,
): Promise<TunnelConnectResult> {
  return new Promise((resolve, reject) => {
    /** Credit the gateway granted this side for target bytes, not yet spent. */
    let credit = sendWindow;
    /** Bytes the gateway pushed that this side has not credited back yet (at most the window it granted). */
    let unacked = 0;
    let bytesIn = 0;
    let bytesOut = 0;
    const inHash = createHash('sha256');
    const outHash = createHash('sha256');
    let settled = false;
    const finish = (err?: LetKiteError) => {
      if (settled) return;
      settled = true;
      side.signal.removeEventListener('abort', onAbort);
      socket.destroy();
      if (err) reject(err);
      else resolve({ address, port, bytes_in: bytesIn, bytes_out: bytesOut });
    };
    const onAbort = () => finish(new LetKiteError('timeout', 'the tunnel connection was cancelled'));
    side.signal.addEventListener('abort', onAbort, { once: true });

    side.stream.listen((event) => {
      if (settled) return;
      switch (event.type) {
        case 'credit':
          credit += event.bytes;
          if (credit > MAX_TUNNEL_WINDOW_BYTES + TUNNEL_CHUNK_BYTES) {
            finish(new LetKiteError('protocol_error', 'the gateway granted more credit than a tunnel window holds'));
            return;
          }
          if (credit > 0 && socket.isPaused()) socket.resume();
          return;
        case 'data': {
          unacked += event.bytes;
          if (unacked > TUNNEL_WINDOW_BYTES) {
            finish(new LetKiteError('protocol_error', 'the gateway pushed past the credit this machine granted'));
            return;
          }
          const n = event.bytes;
          bytesIn += n;
          const last = event.payload.length - 1;
          event.payload.forEach((piece, i) => {
            inHash.update(piece);
            // Credit goes back once the kernel took the bytes: what waits here is bounded by the window.
            socket.write(
              piece,
              i === last
                ? () => {
                    unacked -= n;
                    if (!settled) side.send({ type: 'credit', id: side.id, bytes: n });
                  }
                : undefined,
            );
          });
          if (last < 0 && n > 0) side.send({ type: 'credit', id: side.id, bytes: n });
          return;
        }
        case 'stream_end':
          if (event.sha256 !== inHash.copy().digest('hex')) {
            finish(new LetKiteError('protocol_error', 'the bytes of the tunnel arrived different from what was sent'));
            return;
          }
          socket.end();
          return;
        default:
          finish(new LetKiteError('protocol_error', `unexpected ${event.type} frame on a tunnel`));
      }
    });

    // The connection is up: the first credit tells the gateway so, and how much it may push.
    side.send({ type: 'credit', id: side.id, bytes: TUNNEL_WINDOW_BYTES });

    socket.on('data', (chunk: Buffer) => {
      for (let at = 0; at < chunk.length; at += TUNNEL_CHUNK_BYTES) {
        const piece = chunk.subarray(at, Math.min(chunk.length, at + TUNNEL_CHUNK_BYTES));
        const frame = Buffer.allocUnsafe(DATA_FRAME_HEADER_BYTES + piece.length);
        writeDataFrameHeader(frame, side.id);
        frame.set(piece, DATA_FRAME_HEADER_BYTES);
        outHash.update(piece);
        bytesOut += piece.length;
        credit -= piece.length;
        if (!side.stream.sendBinary(frame)) {
          finish(new LetKiteError('machine_offline', 'the gateway connection closed'));
          return;
        }
      }
      // Stop reading the target until the gateway's reader drains: the target's own flow control takes over.
      if (credit <= 0) socket.pause();
    });
    socket.on('end', () => {
      if (!settled)
        side.send({ type: 'entry_end', id: side.id, bytes: bytesOut, sha256: outHash.copy().digest('hex') });
    });
    // A reset after the connection was up is just its end: the gateway learns the byte counts.
    socket.on('error', () => finish());
    socket.on('close', () => finish());
  });
}
