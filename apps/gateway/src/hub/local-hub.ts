import {
  type AgentCallOp,
  type AgentOp,
  type AgentOpParams,
  type AgentOpResult,
  type AgentStreamOp,
  agentOps,
  LetKiteError,
  MAX_FRAME_BYTES,
  type RequestContext,
  toLetKiteError,
} from '@letkite/protocol';
import type { AgentSession } from './agent-session';
import { EventQueue } from './event-queue';
import type { AgentHub, AgentStream, AgentStreamEvent, CallOptions, StreamOptions } from './types';

/**
 * Most bytes of stream events queued for a reader that is not keeping up. Credit bounds an honest agent to one
 * window (at most 64 MiB, ops-transfer.ts) plus a frame; past this the agent is ignoring credit.
 */
export const MAX_QUEUED_STREAM_BYTES = 64 * 1024 * 1024 + 2 * MAX_FRAME_BYTES;

/** Checks an agent's answer against the op's result schema: a malformed one is the agent's protocol error. */
export function parseAgentResult<K extends AgentOp>(machineId: string, op: K, raw: unknown): AgentOpResult<K> {
  const parsed = agentOps[op].result.safeParse(raw);
  if (parsed.success) return parsed.data as AgentOpResult<K>;
  // Paths only: the values are the agent's output and may hold anything.
  const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.') || '(result)'))];
  throw new LetKiteError('protocol_error', `machine "${machineId}" answered a malformed ${op} result`, { op, fields });
}

/**
 * The embedded hub: agent sockets held by this process, one per machine. Each registration gets an epoch, and the
 * newest epoch holds the machine: a reconnecting agent replaces its old socket, and a registration that turns out
 * older than the holder (a cluster hub learned of a newer one elsewhere, `supersede`) closes itself. Locally the
 * epoch is a counter; a cluster hub passes the epoch its shared presence store handed out.
 */
export class LocalHub implements AgentHub {
  private readonly sessions = new Map<string, AgentSession>();
  private lastEpoch = 0;

  /**
   * Registers a newly authenticated session under `epoch` (default: newer than any so far) and closes whichever
   * socket is older: the previous holder, or this session itself if a newer one already holds the machine.
   * Returns whether this session now holds the machine.
   */
  attach(session: AgentSession, epoch: number = this.lastEpoch + 1): boolean {
    this.lastEpoch = Math.max(this.lastEpoch, epoch);
    session.epoch = epoch;
    const previous = this.sessions.get(session.machineId);
    if (previous && previous !== session && previous.epoch > epoch) {
      session.close(4000, 'replaced by a newer connection');
      return false;
    }
    this.sessions.set(session.machineId, session);
    if (previous && previous !== session) previous.close(4000, 'replaced by a newer connection');
    return true;
  }

  /**
   * Another holder of `machineId` registered with `epoch` (on another gateway): a local socket with an older
   * epoch closes itself. Returns whether one did.
   */
  supersede(machineId: string, epoch: number): boolean {
    this.lastEpoch = Math.max(this.lastEpoch, epoch);
    const held = this.sessions.get(machineId);
    if (!held || held.epoch >= epoch) return false;
    this.sessions.delete(machineId);
    held.close(4000, 'replaced by a newer connection');
    return true;
  }

  /** Forgets a session that closed, unless a newer one already replaced it. */
  detach(session: AgentSession): void {
    if (this.sessions.get(session.machineId) === session) this.sessions.delete(session.machineId);
  }

  /** The epoch of the socket this process holds for a machine, if any. */
  epochOf(machineId: string): number | undefined {
    return this.sessions.get(machineId)?.epoch;
  }

  /** How many agents hold a socket here (the agents-online gauge). */
  get onlineCount(): number {
    return this.sessions.size;
  }

  /** The machines of the list that hold a socket here, synchronously (a cluster hub's fast path). */
  heldHere(machineIds: readonly string[]): Set<string> {
    return new Set(machineIds.filter((id) => this.sessions.has(id)));
  }

  online(machineIds: readonly string[]): Promise<ReadonlySet<string>> {
    return Promise.resolve(this.heldHere(machineIds));
  }

  async call<K extends AgentCallOp>(
    machineId: string,
    op: K,
    params: AgentOpParams<K>,
    context: RequestContext,
    options: CallOptions,
  ): Promise<AgentOpResult<K>> {
    const session = this.sessions.get(machineId);
    if (!session) throw new LetKiteError('machine_offline', `machine "${machineId}" is offline`);
    const raw = await session.request(op, params, context, options).result;
    return parseAgentResult(machineId, op, raw);
  }

  stream<K extends AgentStreamOp>(
    machineId: string,
    op: K,
    params: AgentOpParams<K>,
    context: RequestContext,
    options: StreamOptions,
  ): AgentStream<K> {
    const session = this.sessions.get(machineId);
    const events = new EventQueue<AgentStreamEvent>();
    if (!session) {
      events.end();
      return {
        events,
        push: () => undefined,
        result: Promise.reject(new LetKiteError('machine_offline', `machine "${machineId}" is offline`)),
      };
    }
    // The reader may stop listening on failure; an agent past the queue bound is cut off rather than buffered.
    const overrun = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, overrun.signal]) : overrun.signal;
    let overran = false;
    const sent = session.request(op, params, context, { ...options, signal }, (event) => {
      events.push(event, event.type === 'data' ? event.bytes : 0);
      if (events.queuedBytes > MAX_QUEUED_STREAM_BYTES && !overran) {
        overran = true;
        overrun.abort();
      }
    });
    const result = sent.result.then(
      (raw) => {
        events.end();
        return parseAgentResult(machineId, op, raw);
      },
      (err: unknown) => {
        events.end();
        if (overran) {
          throw new LetKiteError('protocol_error', `machine "${machineId}" streamed past the credit it was granted`);
        }
        throw toLetKiteError(err);
      },
    );
    return { events, push: (event) => session.push(sent.id, event), result };
  }

  async close(): Promise<void> {
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
  }
}
