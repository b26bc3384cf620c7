import { createHash } from 'node:crypto';
import { Duplex } from 'node:stream';
import {
  DATA_FRAME_HEADER_BYTES,
  LetKiteError,
  type RequestContext,
  TUNNEL_CHUNK_BYTES,
  TUNNEL_WINDOW_BYTES,
  type TunnelConnectResult,
  toLetKiteError,
} from '@letkite/protocol';
import type { AgentHub, AgentStream } from '../hub/types';

/** A tunnel connection has no overall limit: it lasts as long as its tunnel (which cancels it when it closes). */
const CONNECTION_TIMEOUT_MS = 7 * 24 * 3600_000;

/** Where one connection leads, as the agent is asked for it. */
export interface TunnelConnectionTarget {
  machineId: string;
  host: string;
  port: number;
  context: RequestContext;
}

/**
 * One TCP connection through a machine's agent, as a Node duplex stream: what is written goes to the target,
 * what the target sends is read. Flow control is the stream's own backpressure both ways (ops-tunnel.ts):
 *
 * - writes wait while the agent's credit is spent, so a client is not read faster than the target takes it;
 * - the agent is granted credit back only as this stream's reader takes what it sent, so a slow reader holds at
 *   most one window (plus the readable buffer) here, whatever the target sends.
 *
 * `connected` settles once the agent reports the connection up (its first credit) or refuses it (the agent's
 * checks: ceiling, policy, resolution). Destroying the stream cancels the request: the agent closes the socket.
 */
export class TunnelConnection extends Duplex {
  readonly connected: Promise<void>;
  readonly result: Promise<TunnelConnectResult>;
  private readonly abort = new AbortController();
  private readonly stream: AgentStream<'tunnel_connect'>;
  /** Credit the agent granted for bytes to the target, not spent yet. */
  private credit = 0;
  /** A write waiting for credit. */
  private waiting: (() => void) | null = null;
  /** Bytes read from the agent that were not credited back yet because the readable side was full. */
  private owed = 0;
  private readonly pushedHash = createHash('sha256');
  /** The agent's socket closed: writes are dropped. */
  private remoteClosed = false;

  constructor(hub: AgentHub, target: TunnelConnectionTarget) {
    super({
      allowHalfOpen: true,
      readableHighWaterMark: TUNNEL_CHUNK_BYTES,
      writableHighWaterMark: TUNNEL_CHUNK_BYTES,
    });
    this.stream = hub.stream(
      target.machineId,
      'tunnel_connect',
      { host: target.host, port: target.port, window_bytes: TUNNEL_WINDOW_BYTES },
      target.context,
      { timeoutMs: CONNECTION_TIMEOUT_MS, signal: this.abort.signal },
    );
    let up: () => void = () => undefined;
    let refused: (err: unknown) => void = () => undefined;
    this.connected = new Promise<void>((resolve, reject) => {
      up = resolve;
      refused = reject;
    });
    // Whoever only awaits `result` (or nothing) must not see an unhandled rejection of `connected`.
    this.connected.catch(() => undefined);
    this.result = this.stream.result;
    this.result.catch((err: unknown) => refused(toLetKiteError(err)));
    void this.relay(up, refused);
  }

  private async relay(up: () => void, refused: (err: unknown) => void): Promise<void> {
    let first = true;
    try {
      for await (const event of this.stream.events) {
        switch (event.type) {
          case 'credit':
            this.credit += event.bytes;
            if (first) {
              first = false;
              up();
            }
            if (this.credit > 0) {
              const wake = this.waiting;
              this.waiting = null;
              wake?.();
            }
            break;
          case 'data': {
            const payload = Buffer.concat(
              event.frame.map((piece, i) => (i === 0 ? piece.subarray(DATA_FRAME_HEADER_BYTES) : piece)),
            );
            if (this.push(payload)) this.grant(payload.length);
            else this.owed += payload.length;
            break;
          }
          case 'entry_end':
            // The target finished sending (half-close): end the readable side, keep writing if the client does.
            this.push(null);
            break;
          default:
            this.destroy(new LetKiteError('protocol_error', `unexpected ${event.type} frame on a tunnel`));
            return;
        }
      }
      await this.result;
      // Judged once every event was read: a target that answered and closed at once was still up.
      if (first) refused(new LetKiteError('protocol_error', 'the machine answered without the connection being up'));
      this.push(null);
      // The agent's socket is closed: what is still written goes nowhere. Not destroyed, so the reader still
      // gets what is buffered here; whoever reads ends (or destroys) this stream once done.
      this.remoteClosed = true;
      const wake = this.waiting;
      this.waiting = null;
      wake?.();
    } catch (err) {
      this.destroy(toLetKiteError(err));
    }
  }

  private grant(bytes: number): void {
    if (bytes > 0) this.stream.push({ type: 'credit', bytes });
  }

  override _read(): void {
    const owed = this.owed;
    this.owed = 0;
    this.grant(owed);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    void this.send(chunk).then(
      () => callback(),
      (err: unknown) => callback(toLetKiteError(err)),
    );
  }

  private async send(chunk: Buffer): Promise<void> {
    for (let at = 0; at < chunk.length; at += TUNNEL_CHUNK_BYTES) {
      if (this.remoteClosed) return;
      if (this.credit <= 0) {
        await new Promise<void>((resolve) => {
          this.waiting = resolve;
        });
      }
      if (this.destroyed) throw new LetKiteError('timeout', 'the tunnel connection closed');
      if (this.remoteClosed) return;
      const piece = chunk.subarray(at, Math.min(chunk.length, at + TUNNEL_CHUNK_BYTES));
      const frame = Buffer.allocUnsafe(DATA_FRAME_HEADER_BYTES + piece.length);
      frame.set(piece, DATA_FRAME_HEADER_BYTES);
      this.pushedHash.update(piece);
      this.credit -= piece.length;
      // The hub writes the request id into the header in place.
      this.stream.push({ type: 'data', bytes: piece.length, frame: [frame] });
    }
  }

  override _final(callback: (err?: Error | null) => void): void {
    if (this.remoteClosed) {
      callback();
      return;
    }
    this.stream.push({ type: 'stream_end', sha256: this.pushedHash.copy().digest('hex') });
    callback();
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.abort.abort();
    const wake = this.waiting;
    this.waiting = null;
    wake?.();
    callback(err);
  }
}
