import { randomUUID } from 'node:crypto';
import {
  type AgentCallOp,
  type AgentOp,
  type AgentOpParams,
  type AgentOpResult,
  type AgentStreamOp,
  agentOps,
  ErrorPayload,
  isAgentOp,
  LetKiteError,
  RequestContext,
  toLetKiteError,
} from '@letkite/protocol';
import { headers, type KV, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from 'nats';
import { z } from 'zod';
import type { AgentSession } from './agent-session';
import { EventQueue } from './event-queue';
import { LocalHub, MAX_QUEUED_STREAM_BYTES, parseAgentResult } from './local-hub';
import {
  BYTES,
  KIND,
  MAX_JOINED_BYTES,
  messageBudget,
  PartAssembler,
  publishParted,
  safePublish,
  type WholeMessage,
} from './nats-parts';
import type { AgentHub, AgentStream, AgentStreamEvent, CallOptions, PushedStreamEvent, StreamOptions } from './types';

/**
 * A hub for several gateways over NATS (docs/design/agent-hub.md). It wraps a LocalHub for the sockets this gateway
 * holds and adds:
 *
 * - presence: a JetStream KV bucket `machineId → {gateway}` whose entry revision is the holder's epoch. A claim is a
 *   put; the heartbeat refreshes it with compare-and-set on the revision, so a holder that lost the machine to a
 *   newer claim learns it on its next refresh at the latest. Every gateway watches the bucket into a local cache;
 *   an entry older than the TTL counts as gone (the bucket's TTL removes it without a delete marker).
 * - routing: a call for a machine held elsewhere is a request to `<prefix>.gw.<gatewayId>.call` (one subscription
 *   per gateway, not per machine). Everything the call streams back (chunks, stream events, data, the answer) comes
 *   on `<prefix>.call.<id>.up`; what the caller pushes goes on `.down`; `.cancel` stops it. The caller keeps its
 *   own timeout.
 */

/** The presence value: which gateway holds the machine's socket. */
const PresenceValue = z.object({ gateway: z.string().min(1).max(128) });

/** What a gateway asks the holder to run. */
const RoutedCall = z.object({
  id: z.string().min(1).max(64),
  machine_id: z.string().min(1).max(128),
  op: z.string().min(1).max(64),
  params: z.unknown(),
  context: RequestContext,
  timeout_ms: z.number().int().positive(),
  stream: z.boolean(),
  /** The params were too large for the request message: they follow on `.down` as a `params` message. */
  params_follow: z.boolean().optional(),
});
type RoutedCall = z.infer<typeof RoutedCall>;

/** One message on a call's `.up` subject; the kind is the `lk-kind` header. Data messages are raw frame bytes. */
const UpMessage = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('chunk'), stream: z.string(), data: z.string(), encoding: z.enum(['utf8', 'base64']) }),
  z.object({ kind: z.literal('event'), event: z.record(z.string(), z.unknown()) }),
  z.object({ kind: z.literal('result'), result: z.unknown() }),
  z.object({ kind: z.literal('error'), error: ErrorPayload }),
]);

/** How often the holder tells the caller that a routed call still runs (three silent periods: it is gone). */
const ALIVE_MS = 2000;

export interface NatsHubOptions {
  nc: NatsConnection;
  /** This gateway's id in the cluster (unique per process). */
  gatewayId: string;
  /** Subject and bucket prefix: separates clusters (and test runs) on one NATS server. */
  prefix: string;
  /** Presence entries expire after this long without a refresh; refreshed every third of it. */
  presenceTtlMs?: number;
  /**
   * The largest message body to publish; larger ones go in parts. Default: the server's max_payload less room for
   * headers (read from the connection), so a server set below the 1 MiB default still works.
   */
  maxMessageBytes?: number;
  log?: (msg: string) => void;
}

interface Presence {
  gateway: string;
  revision: number;
  at: number;
}

function kvKey(machineId: string): string {
  return Buffer.from(machineId).toString('base64url');
}

function fromKvKey(key: string): string {
  return Buffer.from(key, 'base64url').toString();
}

function upHeaders(kind: string, bytes?: number): MsgHdrs {
  const h = headers();
  h.set(KIND, kind);
  if (bytes !== undefined) h.set(BYTES, String(bytes));
  return h;
}

function joinFrame(frame: readonly Uint8Array[]): Uint8Array {
  if (frame.length === 1) return frame[0] as Uint8Array;
  return Buffer.concat(frame as Uint8Array[]);
}

/** The cluster hub: this gateway's sockets through a LocalHub, everyone else's over NATS. */
export class NatsHub implements AgentHub {
  /** The sockets this gateway holds; agent-endpoint registers through `attach`, not directly. */
  readonly local = new LocalHub();
  private readonly presence = new Map<string, Presence>();
  private readonly held = new Map<string, AgentSession>();
  private readonly subscriptions = new Set<Subscription>();
  private readonly ttlMs: number;
  private readonly log: (msg: string) => void;
  private refresher: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly options: NatsHubOptions,
    private readonly kv: KV,
  ) {
    this.ttlMs = options.presenceTtlMs ?? 30_000;
    this.log = options.log ?? (() => undefined);
  }

  /** Opens the presence bucket, starts watching it, and serves calls routed to this gateway. */
  static async start(options: NatsHubOptions): Promise<NatsHub> {
    const ttl = options.presenceTtlMs ?? 30_000;
    const kv = await options.nc.jetstream().views.kv(`${options.prefix}-presence`, { ttl, history: 1 });
    const hub = new NatsHub(options, kv);
    await hub.watchPresence();
    hub.serveRoutedCalls();
    hub.refresher = setInterval(() => void hub.refresh(), Math.max(50, Math.floor(ttl / 3)));
    hub.refresher.unref();
    return hub;
  }

  /** Agent sockets this gateway holds (the agents-online gauge counts each gateway's own). */
  get onlineCount(): number {
    return this.local.onlineCount;
  }

  private budget(): number {
    return Math.min(this.options.maxMessageBytes ?? Number.POSITIVE_INFINITY, messageBudget(this.options.nc));
  }

  private get gatewayId(): string {
    return this.options.gatewayId;
  }

  private subject(...parts: string[]): string {
    return [this.options.prefix, ...parts].join('.');
  }

  /**
   * Registers a newly authenticated socket: claims the machine in the presence bucket (the new revision is its
   * epoch) and hands the socket to the LocalHub, which closes any older local one. Other gateways holding an older
   * socket for the machine see the claim and close theirs.
   */
  async attach(session: AgentSession): Promise<boolean> {
    const revision = await this.kv.put(kvKey(session.machineId), JSON.stringify({ gateway: this.gatewayId }));
    this.presence.set(session.machineId, { gateway: this.gatewayId, revision, at: Date.now() });
    const holds = this.local.attach(session, revision);
    if (holds) this.held.set(session.machineId, session);
    return holds;
  }

  /** Forgets a socket that closed, and its presence entry unless a newer claim replaced it. */
  detach(session: AgentSession): void {
    this.local.detach(session);
    if (this.held.get(session.machineId) !== session) return;
    this.held.delete(session.machineId);
    this.kv
      .delete(kvKey(session.machineId), { previousSeq: session.epoch })
      .catch(() => undefined /* a newer claim already replaced it */);
  }

  /** Re-writes this gateway's claims before they expire; a claim someone else replaced means our socket is stale. */
  private async refresh(): Promise<void> {
    for (const [machineId, session] of this.held) {
      try {
        const revision = await this.kv.update(
          kvKey(machineId),
          JSON.stringify({ gateway: this.gatewayId }),
          session.epoch,
        );
        if (this.held.get(machineId) === session) {
          session.epoch = revision;
          this.presence.set(machineId, { gateway: this.gatewayId, revision, at: Date.now() });
        }
      } catch (err) {
        if (this.closed) return;
        if (this.held.get(machineId) !== session) continue;
        // Compare-and-set failed: a newer holder claimed the machine (or the entry expired while we were cut off).
        this.log(`presence of ${machineId}: ${String(err)}; closing this gateway's older socket`);
        this.held.delete(machineId);
        this.local.supersede(machineId, Number.MAX_SAFE_INTEGER);
      }
    }
  }

  private async watchPresence(): Promise<void> {
    let ready!: () => void;
    const initialized = new Promise<void>((r) => {
      ready = r;
    });
    const watch = await this.kv.watch({ initializedFn: () => ready() });
    void (async () => {
      for await (const entry of watch) {
        const machineId = fromKvKey(entry.key);
        if (entry.operation !== 'PUT') {
          if ((this.presence.get(machineId)?.revision ?? 0) <= entry.revision) this.presence.delete(machineId);
          continue;
        }
        const parsed = PresenceValue.safeParse(safeJson(entry.value));
        if (!parsed.success) continue;
        const known = this.presence.get(machineId);
        if (known && known.revision > entry.revision) continue;
        this.presence.set(machineId, {
          gateway: parsed.data.gateway,
          revision: entry.revision,
          at: entry.created.getTime(),
        });
        // A newer claim by another gateway: our older socket for the machine closes itself.
        if (parsed.data.gateway !== this.gatewayId && this.local.supersede(machineId, entry.revision)) {
          this.held.delete(machineId);
        }
      }
    })();
    await initialized;
  }

  /** Which gateway holds a machine now, if any (the cache of the presence bucket). */
  holderOf(machineId: string): string | null {
    if (this.local.heldHere([machineId]).size > 0) return this.gatewayId;
    const p = this.presence.get(machineId);
    if (!p || p.gateway === this.gatewayId) return null;
    return Date.now() - p.at > this.ttlMs ? null : p.gateway;
  }

  async online(machineIds: readonly string[]): Promise<ReadonlySet<string>> {
    return new Set(machineIds.filter((id) => this.holderOf(id) !== null));
  }

  async call<K extends AgentCallOp>(
    machineId: string,
    op: K,
    params: AgentOpParams<K>,
    context: RequestContext,
    options: CallOptions,
  ): Promise<AgentOpResult<K>> {
    const holder = this.holderOf(machineId);
    if (holder === null) throw new LetKiteError('machine_offline', `machine "${machineId}" is offline`);
    if (holder === this.gatewayId) return this.local.call(machineId, op, params, context, options);
    const routed = this.route(holder, machineId, op, params, context, options, false);
    return routed.result.then((raw) => parseAgentResult(machineId, op, raw));
  }

  stream<K extends AgentStreamOp>(
    machineId: string,
    op: K,
    params: AgentOpParams<K>,
    context: RequestContext,
    options: StreamOptions,
  ): AgentStream<K> {
    const holder = this.holderOf(machineId);
    if (holder === this.gatewayId) return this.local.stream(machineId, op, params, context, options);
    if (holder === null) {
      const events = new EventQueue<AgentStreamEvent>();
      events.end();
      return {
        events,
        push: () => undefined,
        result: Promise.reject(new LetKiteError('machine_offline', `machine "${machineId}" is offline`)),
      };
    }
    const routed = this.route(holder, machineId, op, params, context, options, true);
    return {
      events: routed.events,
      push: routed.push,
      result: routed.result.then((raw) => parseAgentResult(machineId, op, raw)),
    };
  }

  /** The caller's side of a call to a machine another gateway holds. */
  private route(
    holder: string,
    machineId: string,
    op: AgentOp,
    params: unknown,
    context: RequestContext,
    options: CallOptions,
    stream: boolean,
  ): { events: EventQueue<AgentStreamEvent>; push: (event: PushedStreamEvent) => void; result: Promise<unknown> } {
    const { nc } = this.options;
    const id = randomUUID();
    const down = this.subject('call', id, 'down');
    const budget = this.budget();
    const events = new EventQueue<AgentStreamEvent>();
    let settled = false;
    let acked = false;
    let cancelled = false;
    // Pushes wait for the holder's acknowledgement: before it, the holder may not be listening on `.down` yet.
    let early: PushedStreamEvent[] | null = [];
    const send = (event: PushedStreamEvent) => {
      if (event.type === 'data') {
        publishParted(nc, down, 'data', joinFrame(event.frame), budget, { [BYTES]: String(event.bytes) });
      } else {
        publishParted(nc, down, 'event', encode(event), budget);
      }
    };
    const push = (event: PushedStreamEvent) => {
      if (settled) return;
      if (early) early.push(event);
      else send(event);
    };
    const request: RoutedCall = {
      id,
      machine_id: machineId,
      op,
      params,
      context,
      timeout_ms: options.timeoutMs,
      stream,
    };
    let body = encode(request);
    // Params too large for one request message (a write_file near the frame limit) follow on `.down`, in parts.
    let followingParams: Uint8Array | null = null;
    if (body.byteLength > budget) {
      followingParams = encode({ params });
      body = encode({ ...request, params: null, params_follow: true });
    }
    if (followingParams && followingParams.byteLength > MAX_JOINED_BYTES) {
      // No agent frame can carry it either (MAX_FRAME_BYTES): refused here, before anything is sent.
      events.end();
      return {
        events,
        push: () => undefined,
        result: Promise.reject(new LetKiteError('too_large', `the ${op} request is over the agent frame limit`)),
      };
    }
    const result = new Promise<unknown>((resolve, reject) => {
      let lastHeard = Date.now();
      const finish = (err: LetKiteError | null, value?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(liveness);
        options.signal?.removeEventListener('abort', onAbort);
        sub.unsubscribe();
        events.end();
        if (err) reject(err);
        else resolve(value);
      };
      const cancel = (err: LetKiteError) => {
        if (settled) return;
        cancelled = true;
        // Before the acknowledgement the holder may not listen on `.cancel` yet: the ack handler sends it again.
        safePublish(nc, this.subject('call', id, 'cancel'));
        finish(err);
      };
      const onAbort = () => cancel(new LetKiteError('timeout', 'the call was cancelled'));
      const timer = setTimeout(
        () =>
          cancel(new LetKiteError('timeout', `machine "${machineId}" did not answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      // The holder sends `alive` while the call runs: silence means it died (kill -9), so the call fails now as
      // offline instead of waiting out its whole timeout.
      const liveness = setInterval(() => {
        if (acked && Date.now() - lastHeard > 3 * ALIVE_MS) {
          finish(new LetKiteError('machine_offline', `the gateway holding machine "${machineId}" went away`));
        }
      }, ALIVE_MS);
      liveness.unref();
      const assembler = new PartAssembler();
      const sub = nc.subscribe(this.subject('call', id, 'up'), {
        callback: (err, msg) => {
          if (err) return finish(toLetKiteError(err));
          lastHeard = Date.now();
          let whole: WholeMessage | null;
          try {
            whole = assembler.accept(msg);
          } catch {
            return cancel(new LetKiteError('protocol_error', 'a malformed message from the holding gateway'));
          }
          if (!whole || whole.kind === 'alive') return;
          if (whole.kind === 'data') {
            const bytes = Number(whole.headers?.get(BYTES));
            events.push({ type: 'data', bytes, frame: [whole.data] }, whole.data.byteLength);
            // The same bound as LocalHub's: a reader that does not read, or an agent past its credit.
            if (events.queuedBytes > MAX_QUEUED_STREAM_BYTES) {
              cancel(new LetKiteError('protocol_error', 'stream data beyond the credit granted'));
            }
            return;
          }
          const up = UpMessage.safeParse({ kind: whole.kind, ...(safeJson(whole.data) as object) });
          if (!up.success)
            return cancel(new LetKiteError('protocol_error', 'a malformed message from the holding gateway'));
          switch (up.data.kind) {
            case 'chunk':
              options.onChunk?.(up.data.stream, up.data.data, up.data.encoding);
              return;
            case 'event':
              events.push(up.data.event as AgentStreamEvent);
              return;
            case 'result':
              return finish(null, up.data.result);
            case 'error':
              return finish(LetKiteError.fromPayload(up.data.error));
          }
        },
      });
      if (options.signal?.aborted) return finish(new LetKiteError('timeout', 'the call was cancelled'));
      options.signal?.addEventListener('abort', onAbort, { once: true });
      // The holder acknowledges once it is subscribed to `.down` and `.cancel`; no responder means it is gone.
      nc.request(this.subject('gw', holder, 'call'), body, { timeout: 5000 }).then(
        (ack) => {
          acked = true;
          lastHeard = Date.now();
          if (cancelled) {
            safePublish(nc, this.subject('call', id, 'cancel'));
            return;
          }
          const answer = safeJson(ack.data) as { ok?: boolean; error?: unknown } | null;
          const error = ErrorPayload.safeParse(answer?.error);
          if (error.success) return finish(LetKiteError.fromPayload(error.data));
          if (followingParams) publishParted(nc, down, 'params', followingParams, budget);
          const queued = early ?? [];
          early = null;
          if (!settled) for (const event of queued) send(event);
        },
        () =>
          finish(
            new LetKiteError('machine_offline', `machine "${machineId}" is offline (its gateway does not answer)`),
          ),
      );
    });
    return { events, push, result };
  }

  /** The holder's side: runs calls other gateways route here on this gateway's sockets. */
  private serveRoutedCalls(): void {
    const sub = this.options.nc.subscribe(this.subject('gw', this.gatewayId, 'call'), {
      callback: (err, msg) => {
        if (err) return;
        const parsed = RoutedCall.safeParse(safeJson(msg.data));
        if (!parsed.success || !isAgentOp(parsed.data.op)) {
          msg.respond(JSON.stringify({ error: { code: 'protocol_error', message: 'malformed routed call' } }));
          return;
        }
        this.runRouted(parsed.data, msg);
      },
    });
    this.subscriptions.add(sub);
  }

  private runRouted(call: RoutedCall, msg: Msg): void {
    const { nc } = this.options;
    const budget = this.budget();
    const op = call.op as AgentOp;
    const up = this.subject('call', call.id, 'up');
    const abort = new AbortController();
    const alive = setInterval(() => safePublish(nc, up, undefined, { headers: upHeaders('alive') }), ALIVE_MS);
    alive.unref();
    let stream: AgentStream<AgentStreamOp> | null = null;
    let started = false;
    const assembler = new PartAssembler();
    const subs: Subscription[] = [
      nc.subscribe(this.subject('call', call.id, 'cancel'), { max: 1, callback: () => abort.abort() }),
      nc.subscribe(this.subject('call', call.id, 'down'), {
        callback: (e, m) => {
          if (e) return;
          let whole: WholeMessage | null;
          try {
            whole = assembler.accept(m);
          } catch {
            if (!started) {
              started = true;
              void answer(Promise.reject(new LetKiteError('too_large', 'the routed request is over the size limit')));
            }
            abort.abort();
            return;
          }
          if (!whole) return;
          if (whole.kind === 'params') {
            if (!started) begin((safeJson(whole.data) as { params?: unknown } | null)?.params);
            return;
          }
          if (!stream) return;
          if (whole.kind === 'data') {
            stream.push({ type: 'data', bytes: Number(whole.headers?.get(BYTES)), frame: [whole.data] });
            return;
          }
          const event = safeJson(whole.data);
          if (event && typeof event === 'object') stream.push(event as PushedStreamEvent);
        },
      }),
    ];
    const done = () => {
      clearInterval(alive);
      for (const s of subs) s.unsubscribe();
    };
    const answer = (value: Promise<unknown>) =>
      value
        .then(
          (result) => publishParted(nc, up, 'result', encode({ result }), budget),
          (err: unknown) => publishParted(nc, up, 'error', encode({ error: toLetKiteError(err).toPayload() }), budget),
        )
        .finally(done);
    const options = { timeoutMs: call.timeout_ms, signal: abort.signal };
    const begin = (raw: unknown) => {
      started = true;
      const params = raw as never;
      if (call.stream && agentOps[op].shape === 'stream') {
        const s = this.local.stream(call.machine_id, op as AgentStreamOp, params, call.context, options);
        stream = s;
        const pumped = (async () => {
          for await (const event of s.events) {
            if (event.type === 'data') {
              publishParted(nc, up, 'data', joinFrame(event.frame), budget, { [BYTES]: String(event.bytes) });
            } else {
              publishParted(nc, up, 'event', encode({ event }), budget);
            }
          }
        })();
        // Every event goes out before the answer: the caller's events end with it.
        void answer(Promise.all([s.result, pumped]).then(([result]) => result));
      } else if (!call.stream && agentOps[op].shape !== 'stream') {
        const onChunk = (stream: string, data: string, encoding: 'utf8' | 'base64') =>
          publishParted(nc, up, 'chunk', encode({ stream, data, encoding }), budget);
        void answer(this.local.call(call.machine_id, op as AgentCallOp, params, call.context, { ...options, onChunk }));
      } else {
        void answer(Promise.reject(new LetKiteError('protocol_error', `"${op}" routed with the wrong shape`)));
      }
    };
    if (call.params_follow) {
      // The caller sends the params on `.down` after our acknowledgement; its timeout covers their never coming.
      setTimeout(() => {
        if (!started) void answer(Promise.reject(new LetKiteError('timeout', "the call's params never came")));
      }, call.timeout_ms).unref();
    } else {
      begin(call.params);
    }
    msg.respond(JSON.stringify({ ok: true }));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.refresher);
    for (const s of this.subscriptions) s.unsubscribe();
    this.subscriptions.clear();
    const claims = [...this.held.entries()];
    this.held.clear();
    await Promise.allSettled(
      claims.map(([machineId, s]) => this.kv.delete(kvKey(machineId), { previousSeq: s.epoch })),
    );
    await this.local.close();
  }
}

function encode(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value));
}

function safeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString());
  } catch {
    return null;
  }
}
