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
import { LocalHub, parseAgentResult } from './local-hub';
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
});
type RoutedCall = z.infer<typeof RoutedCall>;

/** One message on a call's `.up` subject; the kind is the `lk-kind` header. Data messages are raw frame bytes. */
const UpMessage = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('chunk'), stream: z.string(), data: z.string(), encoding: z.enum(['utf8', 'base64']) }),
  z.object({ kind: z.literal('event'), event: z.record(z.string(), z.unknown()) }),
  z.object({ kind: z.literal('result'), result: z.unknown() }),
  z.object({ kind: z.literal('error'), error: ErrorPayload }),
]);

const KIND = 'lk-kind';
const BYTES = 'lk-bytes';

export interface NatsHubOptions {
  nc: NatsConnection;
  /** This gateway's id in the cluster (unique per process). */
  gatewayId: string;
  /** Subject and bucket prefix: separates clusters (and test runs) on one NATS server. */
  prefix: string;
  /** Presence entries expire after this long without a refresh; refreshed every third of it. */
  presenceTtlMs?: number;
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
    const events = new EventQueue<AgentStreamEvent>();
    let settled = false;
    // Pushes wait for the holder's acknowledgement: before it, the holder may not be listening on `.down` yet.
    let early: PushedStreamEvent[] | null = [];
    const send = (event: PushedStreamEvent) => {
      if (event.type === 'data') {
        nc.publish(this.subject('call', id, 'down'), joinFrame(event.frame), {
          headers: upHeaders('data', event.bytes),
        });
      } else {
        nc.publish(this.subject('call', id, 'down'), JSON.stringify(event), { headers: upHeaders('event') });
      }
    };
    const push = (event: PushedStreamEvent) => {
      if (settled) return;
      if (early) early.push(event);
      else send(event);
    };
    const result = new Promise<unknown>((resolve, reject) => {
      const finish = (err: LetKiteError | null, value?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        sub.unsubscribe();
        events.end();
        if (err) reject(err);
        else resolve(value);
      };
      const cancel = (err: LetKiteError) => {
        if (settled) return;
        nc.publish(this.subject('call', id, 'cancel'));
        finish(err);
      };
      const onAbort = () => cancel(new LetKiteError('timeout', 'the call was cancelled'));
      const timer = setTimeout(
        () =>
          cancel(new LetKiteError('timeout', `machine "${machineId}" did not answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      const sub = nc.subscribe(this.subject('call', id, 'up'), {
        callback: (err, msg) => {
          if (err) return finish(toLetKiteError(err));
          const kind = msg.headers?.get(KIND);
          if (kind === 'data') {
            const bytes = Number(msg.headers?.get(BYTES));
            events.push({ type: 'data', bytes, frame: [msg.data] }, bytes);
            return;
          }
          const up = UpMessage.safeParse({ kind, ...(safeJson(msg.data) as object) });
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
      const request: RoutedCall = {
        id,
        machine_id: machineId,
        op,
        params,
        context,
        timeout_ms: options.timeoutMs,
        stream,
      };
      // The holder acknowledges once it is subscribed to `.down` and `.cancel`; no responder means it is gone.
      nc.request(this.subject('gw', holder, 'call'), JSON.stringify(request), { timeout: 5000 }).then(
        (ack) => {
          const answer = safeJson(ack.data) as { ok?: boolean; error?: unknown } | null;
          const error = ErrorPayload.safeParse(answer?.error);
          if (error.success) return finish(LetKiteError.fromPayload(error.data));
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
    const op = call.op as AgentOp;
    const up = this.subject('call', call.id, 'up');
    const abort = new AbortController();
    const subs: Subscription[] = [
      nc.subscribe(this.subject('call', call.id, 'cancel'), { max: 1, callback: () => abort.abort() }),
    ];
    const done = () => {
      for (const s of subs) s.unsubscribe();
    };
    const answer = (value: Promise<unknown>) =>
      value
        .then(
          (result) => nc.publish(up, JSON.stringify({ result }), { headers: upHeaders('result') }),
          (err: unknown) =>
            nc.publish(up, JSON.stringify({ error: toLetKiteError(err).toPayload() }), { headers: upHeaders('error') }),
        )
        .finally(done);
    const options = { timeoutMs: call.timeout_ms, signal: abort.signal };
    const params = call.params as never;
    if (call.stream && agentOps[op].shape === 'stream') {
      const stream = this.local.stream(call.machine_id, op as AgentStreamOp, params, call.context, options);
      subs.push(
        nc.subscribe(this.subject('call', call.id, 'down'), {
          callback: (e, m) => {
            if (e) return;
            if (m.headers?.get(KIND) === 'data') {
              stream.push({ type: 'data', bytes: Number(m.headers.get(BYTES)), frame: [m.data] });
              return;
            }
            const event = safeJson(m.data);
            if (event && typeof event === 'object') stream.push(event as PushedStreamEvent);
          },
        }),
      );
      const pumped = (async () => {
        for await (const event of stream.events) {
          if (event.type === 'data') {
            nc.publish(up, joinFrame(event.frame), { headers: upHeaders('data', event.bytes) });
          } else {
            nc.publish(up, JSON.stringify({ event }), { headers: upHeaders('event') });
          }
        }
      })();
      // Every event goes out before the answer: the caller's events end with it.
      void answer(Promise.all([stream.result, pumped]).then(([result]) => result));
    } else if (!call.stream && agentOps[op].shape !== 'stream') {
      const onChunk = (stream: string, data: string, encoding: 'utf8' | 'base64') =>
        nc.publish(up, JSON.stringify({ stream, data, encoding }), { headers: upHeaders('chunk') });
      void answer(this.local.call(call.machine_id, op as AgentCallOp, params, call.context, { ...options, onChunk }));
    } else {
      void answer(Promise.reject(new LetKiteError('protocol_error', `"${op}" routed with the wrong shape`)));
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

function safeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString());
  } catch {
    return null;
  }
}
