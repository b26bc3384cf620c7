import { randomBytes } from 'node:crypto';
import {
  type AgentFrame,
  type ErrorCode,
  type GatewayFrame,
  LetKiteError,
  PROTOCOL_VERSION,
  type RequestContext,
  writeDataFrameHeader,
} from '@letkite/protocol';
import type { WebSocket } from 'ws';
import { type Beating, type HeartbeatWheel, heartbeatWheel } from './heartbeat-wheel';
import type { AgentStreamEvent, CallOptions, PushedStreamEvent } from './types';

/** A socket whose peer stops reading is cut off once this much is queued, rather than buffering without bound. */
export const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: LetKiteError) => void;
  options: CallOptions;
  /** A streamed call's listener for the agent's stream events. */
  onEvent: ((event: AgentStreamEvent) => void) | undefined;
  timer: NodeJS.Timeout;
  cleanup: () => void;
}

/** A request sent on this socket: its id (to push stream events to) and its raw answer. */
export interface SentRequest {
  id: string;
  result: Promise<unknown>;
}

/**
 * What a session tells its owner. Each callback is handed the session, so one owner object can serve many
 * sessions without a closure per socket.
 */
export interface AgentSessionEvents {
  onReport(frame: Extract<AgentFrame, { type: 'report' }>, session: AgentSession): void;
  onClose(session: AgentSession): void;
  /** The agent answered a heartbeat ping. */
  onPong?(session: AgentSession): void;
  log(msg: string): void;
}

/**
 * One authenticated agent socket: request/response correlation, chunk and stream delivery, heartbeats. `epoch`
 * orders the sockets a machine has held: the hub keeps the newest and closes older ones (local-hub.ts).
 */
export class AgentSession implements Beating {
  /** Set by the hub when it registers this socket. */
  epoch = 0;
  /** Calls awaiting an answer; created with the first call, as most idle agents never get one. */
  private pending: Map<string, Pending> | null = null;
  private nextId = 1;
  private alive = true;
  private closed = false;
  private readonly heartbeats: HeartbeatWheel;

  constructor(
    readonly machineId: string,
    private readonly ws: WebSocket,
    heartbeatMs: number,
    private readonly events: AgentSessionEvents,
  ) {
    ws.on('pong', () => {
      this.alive = true;
      this.events.onPong?.(this);
    });
    ws.on('close', () => this.handleClose());
    // One shared timer beats every socket (heartbeat-wheel.ts), not an interval per socket.
    this.heartbeats = heartbeatWheel(heartbeatMs);
    this.heartbeats.add(this);
  }

  /** One heartbeat: close the socket if the last ping went unanswered, else ping again. */
  beat(): void {
    if (!this.alive) {
      this.events.log(`agent ${this.machineId}: no heartbeat answer, closing`);
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  /** Handles one parsed frame from the agent (the handshake is over). */
  handleFrame(frame: AgentFrame): void {
    switch (frame.type) {
      case 'chunk': {
        const p = this.pending?.get(frame.id);
        p?.options.onChunk?.(frame.stream, frame.data, frame.encoding ?? 'utf8');
        return;
      }
      case 'response': {
        const p = this.pending?.get(frame.id);
        if (!p) return;
        this.settle(frame.id);
        p.resolve(frame.result);
        return;
      }
      case 'error': {
        if (frame.id === undefined) {
          this.events.log(`agent ${this.machineId} reported: ${frame.error.code}: ${frame.error.message}`);
          return;
        }
        const p = this.pending?.get(frame.id);
        if (!p) return;
        this.settle(frame.id);
        p.reject(LetKiteError.fromPayload(frame.error));
        return;
      }
      case 'report':
        this.events.onReport(frame, this);
        return;
      case 'credit':
      case 'entry':
      case 'entry_end': {
        const { id, ...event } = frame;
        this.pending?.get(id)?.onEvent?.(event);
        return;
      }
      case 'auth':
        this.fail('protocol_error', 'auth frame after the handshake');
        return;
    }
  }

  /** Handles one binary data frame from the agent; data for a call that already ended is dropped. */
  handleData(id: string, bytes: number, frame: Buffer[]): void {
    this.pending?.get(id)?.onEvent?.({ type: 'data', bytes, frame });
  }

  /**
   * Sends one request; `onEvent` receives a streamed call's events (transfers). The answer is raw: the hub
   * validates it against the op's result schema.
   */
  request(
    op: string,
    params: unknown,
    context: RequestContext,
    options: CallOptions,
    onEvent?: (event: AgentStreamEvent) => void,
  ): SentRequest {
    const id = `r${this.nextId++}`;
    if (this.closed) {
      return {
        id,
        result: Promise.reject(new LetKiteError('machine_offline', `machine "${this.machineId}" is offline`)),
      };
    }
    const result = new Promise<unknown>((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending?.has(id)) return;
        this.settle(id);
        this.send({ type: 'cancel', id });
        reject(new LetKiteError('timeout', 'the call was cancelled'));
      };
      const timer = setTimeout(() => {
        if (!this.pending?.has(id)) return;
        this.settle(id);
        this.send({ type: 'cancel', id });
        reject(
          new LetKiteError('timeout', `machine "${this.machineId}" did not answer within ${options.timeoutMs} ms`),
        );
      }, options.timeoutMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending ??= new Map();
      this.pending.set(id, {
        resolve,
        reject,
        options,
        onEvent,
        timer,
        cleanup: () => options.signal?.removeEventListener('abort', onAbort),
      });
      // Cancelled before it was sent: the agent never hears of it.
      if (options.signal?.aborted) {
        this.settle(id);
        reject(new LetKiteError('timeout', 'the call was cancelled'));
        return;
      }
      this.send({ type: 'request', id, op, params, context });
    });
    return { id, result };
  }

  /** Pushes one stream event to the agent on request `id`; dropped once that request has settled. */
  push(id: string, event: PushedStreamEvent): void {
    if (!this.pending?.has(id)) return;
    if (event.type === 'data') this.forwardData(id, event.frame);
    else this.send({ ...event, id } as GatewayFrame);
  }

  send(frame: GatewayFrame): void {
    if (this.closed) return;
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.events.log(`agent ${this.machineId}: not reading (${this.ws.bufferedAmount} bytes queued), closing`);
      this.ws.terminate();
      return;
    }
    this.ws.send(JSON.stringify(frame));
  }

  /**
   * Sends a data frame (its fragments, header in the first) re-addressed to call `id`, as one message in the
   * same fragments. Not subject to the bufferedAmount guard: the caller's credit window already bounds what is
   * queued, and a peer that stops reading stops granting credit.
   */
  private forwardData(id: string, frame: readonly Uint8Array[]): void {
    if (this.closed || frame.length === 0) return;
    writeDataFrameHeader(frame[0] as Uint8Array, id);
    const last = frame.length - 1;
    for (let i = 0; i <= last; i += 1) this.ws.send(frame[i] as Uint8Array, { binary: true, fin: i === last });
  }

  /** Sends a fatal protocol error and closes the socket. */
  fail(code: ErrorCode, message: string): void {
    this.send({ type: 'error', error: { code, message } });
    this.ws.close(1008, code);
  }

  close(code = 1001, reason = 'gateway shutting down'): void {
    this.ws.close(code, reason);
  }

  private settle(id: string): void {
    const p = this.pending?.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    p.cleanup();
    this.pending?.delete(id);
  }

  private handleClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.heartbeats.remove(this);
    for (const [id, p] of this.pending ?? []) {
      this.settle(id);
      p.reject(new LetKiteError('machine_offline', `machine "${this.machineId}" disconnected during the call`));
    }
    this.events.onClose(this);
  }
}

export function newNonce(): string {
  return randomBytes(32).toString('base64url');
}

export { PROTOCOL_VERSION };
