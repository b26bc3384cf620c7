import { createPrivateKey, sign } from 'node:crypto';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import {
  type AgentFrame,
  agentAuthText,
  dataFrameFragments,
  decodeDataFragments,
  GatewayFrame,
  type HandshakeTranscript,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  type RequestFrame,
} from '@letkite/protocol';
import WebSocket from 'ws';
import { agentInfo } from './agent-info';
import { certificatePin, gatewayProofValid, newAgentNonce, pinnedCertificate, pinnedGatewayKey } from './gateway-trust';
import { agentSocketUrl, checkGatewayUrl } from './gateway-url';
import { RequestStream } from './request-stream';
import type { AgentState } from './state';

/** How long the gateway has, from the socket opening, to send a welcome that proves its identity. */
const HANDSHAKE_TIMEOUT_MS = 15_000;

/**
 * Most requests one gateway may have running at once; the next is refused with `rate_limited` and runs nothing.
 * Far above what an honest gateway needs (one request per tool call in flight), it bounds what a rogue one can
 * start at the same moment: processes, descriptors, memory.
 */
export const MAX_INFLIGHT_REQUESTS = 128;

/** If the gateway stops reading, we close rather than queue without bound. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** The bytes of a ws message (binaryType "fragments": a binary message arrives as the list of its fragments). */
function rawBuffer(raw: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  return Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw);
}

/** A Retry-After header's delay in ms (delta-seconds only; an HTTP date or nonsense counts as none), capped at 5 min. */
export function retryAfterMs(header: string | string[] | undefined): number {
  const v = Array.isArray(header) ? header[0] : header;
  if (v === undefined || !/^\d{1,6}$/.test(v.trim())) return 0;
  return Math.min(Number(v.trim()), 300) * 1000;
}

/**
 * Exponential backoff with full jitter (anywhere from 0 to the capped step): a fleet of agents does not reconnect
 * in lockstep after an outage, and when a cluster gateway goes away its agents spread over the others at once.
 */
export function backoffDelay(attempt: number, b: Backoff, random: () => number = Math.random): number {
  const cap = Math.min(b.maxMs, b.initialMs * 2 ** Math.min(attempt, 20));
  return Math.round(random() * cap);
}

/**
 * The gateways an agent may dial: the URL it joined (always kept) and those the last welcome named, each checked
 * like the joined one. Fail closed on a downgrade: when the join was over https, an http URL is dropped, and every
 * https one is held to the TLS pin taken at join (a cluster's gateways share the certificate key, or sit behind one
 * URL); every one must prove the pinned gateway identity in its welcome whatever the list says.
 */
export function gatewayCandidates(state: AgentState, named: readonly string[] = state.gateways ?? []): string[] {
  const joined = checkGatewayUrl(state.gateway_url, state.insecure);
  const urls = [state.gateway_url];
  // Compared as parsed URLs: `http://h:1` and `http://h:1/` are one gateway.
  const seen = new Set([joined.href]);
  for (const raw of named) {
    let url: URL;
    try {
      url = checkGatewayUrl(raw, state.insecure);
    } catch {
      continue;
    }
    if (url.protocol !== joined.protocol || seen.has(url.href)) continue;
    seen.add(url.href);
    urls.push(raw);
  }
  return urls;
}

export interface ConnectionHandlers {
  /** Runs one request; frames it sends go through `send`. Must answer with exactly one response or error frame. */
  onRequest(
    frame: RequestFrame,
    send: (frame: AgentFrame) => void,
    signal: AbortSignal,
    stream: RequestStream,
  ): Promise<void>;
  /** Called after each successful handshake, e.g. to report the ceiling. */
  onConnected(send: (frame: AgentFrame) => void): void;
  /** A welcome named the cluster's other gateways (differently from before): e.g. to keep them in the state file. */
  onGateways?(gateways: readonly string[]): void;
  log(msg: string): void;
}

/**
 * The agent's one outbound socket: dials, proves its identity by signing the gateway's challenge, requires the
 * gateway to prove its pinned identity in the welcome, serves requests, and reconnects with backoff whenever the
 * socket drops or the gateway fails to prove itself. Nothing the gateway sends is obeyed before that proof.
 */
export class GatewayConnection {
  private ws: WebSocket | null = null;
  private stopped = false;
  private attempt = 0;
  /** Set when the gateway refused the upgrade with a Retry-After; the next reconnect waits at least this long. */
  private retryAfterMs = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private readonly inflight = new Map<string, { controller: AbortController; stream: RequestStream }>();
  private readonly key;
  /** Where to dial: the joined gateway and the others of its cluster (gatewayCandidates); `current` indexes it. */
  private candidates: string[];
  private current = 0;
  /** The gateway identity key pinned at join (SPKI DER, base64). */
  private readonly gatewayKey: string;
  /** For wss://: the TLS certificate pin seen at join. */
  private readonly tlsPin: string | null;
  private connectedOnce: (() => void) | null = null;
  /** Resolves after the first successful handshake. */
  readonly ready: Promise<void>;
  /** Current socket: the one `send` targets. */
  private live: WebSocket | null = null;

  constructor(
    private readonly state: AgentState,
    private readonly handlers: ConnectionHandlers,
    private readonly backoff: Backoff = { initialMs: 500, maxMs: 30_000 },
  ) {
    // Fails closed, before any socket, for a state without a pin (enrolled by older code).
    this.gatewayKey = pinnedGatewayKey(state);
    this.tlsPin = pinnedCertificate(state);
    this.key = createPrivateKey(state.private_key_pem);
    this.candidates = gatewayCandidates(state);
    this.ready = new Promise((resolve) => {
      this.connectedOnce = resolve;
    });
  }

  start(): void {
    this.dial();
  }

  /** Sends a frame on the live socket, if any (e.g. a ceiling report after a file change). */
  send(frame: AgentFrame): void {
    if (this.live) this.sendOn(this.live, frame);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.watchdog);
    for (const c of this.inflight.values()) c.controller.abort();
    const ws = this.ws;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        ws.close(1001, 'agent stopping');
        setTimeout(() => {
          ws.terminate();
          resolve();
        }, 1000).unref();
      });
    }
  }

  private sendOn(ws: WebSocket, frame: AgentFrame): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.handlers.log('gateway is not reading; closing the socket');
      ws.terminate();
      return;
    }
    ws.send(JSON.stringify(frame));
  }

  /**
   * Sends a binary data frame as one message in DATA_FRAGMENT_BYTES fragments (so receivers need not copy it); no
   * bufferedAmount guard, since credit already bounds how much is in flight. `written` runs after the last one.
   */
  private sendBinaryOn(ws: WebSocket, frame: Uint8Array, written?: () => void): boolean {
    if (ws.readyState !== WebSocket.OPEN) return false;
    const pieces = dataFrameFragments(frame);
    const last = pieces.length - 1;
    for (let i = 0; i < last; i += 1) ws.send(pieces[i] as Uint8Array, { binary: true, fin: false });
    ws.send(pieces[last] as Uint8Array, { binary: true, fin: true }, written && (() => written()));
    return true;
  }

  /** The gateway URL dialled now. */
  get gatewayUrl(): string {
    return this.candidates[this.current] ?? this.state.gateway_url;
  }

  /** The cluster's gateways as the last welcome named them (the joined one first). */
  get gateways(): readonly string[] {
    return this.candidates;
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    // In a cluster every gateway serves every machine: the next try goes to the next gateway of the list, so an
    // agent whose gateway died (or shut down) is back on another within one backoff step.
    if (this.candidates.length > 1) this.current = (this.current + 1) % this.candidates.length;
    // A gateway at its handshake bound says how long to stay away (Retry-After on a 503): at least that, plus
    // jitter of its own, so refused agents spread out instead of returning together.
    const told = this.retryAfterMs;
    this.retryAfterMs = 0;
    const delay = Math.max(
      backoffDelay(this.attempt++, this.backoff),
      told > 0 ? told + Math.random() * told * 0.5 : 0,
    );
    this.handlers.log(`reconnecting in ${delay} ms`);
    this.retryTimer = setTimeout(() => this.dial(), delay);
  }

  private armWatchdog(ws: WebSocket, heartbeatMs: number): void {
    clearTimeout(this.watchdog);
    // The gateway pings every heartbeatMs; three silent intervals mean the path is dead even if TCP says otherwise.
    this.watchdog = setTimeout(() => {
      this.handlers.log('no heartbeat from the gateway; reconnecting');
      ws.terminate();
    }, heartbeatMs * 3);
  }

  private dial(): void {
    if (this.stopped) return;
    const gatewayUrl = this.gatewayUrl;
    const ws = new WebSocket(agentSocketUrl(checkGatewayUrl(gatewayUrl, this.state.insecure)), {
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: 10_000,
      // RFC 6455 masking guards browser-facing proxies from cache poisoning by scripts; the agent is no browser
      // and production links are TLS. An all-zero mask lets ws skip XOR-ing every byte on both ends, which is
      // most of the CPU a bulk transfer costs the agent and the gateway.
      generateMask: (mask) => mask.fill(0),
      // The chain and the name are validated as usual; on top, the certificate's key must be the one seen at join.
      // (ws hands this to tls.connect, whose contract is Node's: return an Error to refuse; its typing is older.)
      ...(this.tlsPin
        ? {
            checkServerIdentity: ((host: string, cert: PeerCertificate) =>
              this.checkPin(host, cert)) as unknown as WebSocket.ClientOptions['checkServerIdentity'],
          }
        : {}),
    });
    // Binary messages (data frames) arrive as their fragments, views of what the socket read: no copy per message.
    ws.binaryType = 'fragments';
    this.ws = ws;
    let heartbeatMs = 15_000;
    let welcomed = false;
    /** Set once we answered the challenge: what the gateway's proof must cover. */
    let transcript: HandshakeTranscript | null = null;
    // Anything but the handshake before the gateway proved itself (or a handshake frame out of turn): obey
    // nothing, close, and say so.
    const refuseUnproven = (what: string) => {
      const why = welcomed ? 'out of turn' : 'before the gateway proved its identity';
      this.handlers.log(`refused ${what} from ${gatewayUrl} ${why}; closing (protocol_error)`);
      this.sendOn(ws, { type: 'error', error: { code: 'protocol_error', message: `${what} ${why}` } });
      ws.close(1008, 'protocol_error');
    };

    // Whoever holds the socket open without proving itself would keep us from the real gateway: give up and retry.
    const handshakeTimer = setTimeout(() => {
      if (welcomed) return;
      this.handlers.log(`the gateway at ${gatewayUrl} did not prove its identity in time; reconnecting`);
      ws.terminate();
    }, HANDSHAKE_TIMEOUT_MS);
    ws.on('ping', () => {
      if (welcomed) this.armWatchdog(ws, heartbeatMs);
    });
    ws.on('error', (err) => this.handlers.log(`socket error: ${err.message}`));
    ws.on('unexpected-response', (_req, res) => {
      this.retryAfterMs = retryAfterMs(res.headers['retry-after']);
      this.handlers.log(
        `the gateway answered ${res.statusCode}${this.retryAfterMs ? ` (retry after ${this.retryAfterMs / 1000} s)` : ''}`,
      );
      res.resume();
      ws.terminate();
    });
    ws.on('close', (code, reason) => {
      clearTimeout(handshakeTimer);
      // A gateway going away on purpose (1001: graceful shutdown, its agents move to another at once, spread by
      // the jitter of the first backoff step).
      if (welcomed && code === 1001) this.attempt = 0;
      clearTimeout(this.watchdog);
      if (this.live === ws) this.live = null;
      for (const c of this.inflight.values()) c.controller.abort();
      this.inflight.clear();
      if (welcomed) this.handlers.log(`disconnected (${code}${reason.length ? ` ${reason.toString()}` : ''})`);
      this.scheduleReconnect();
    });
    ws.on('message', (raw, isBinary) => {
      if (!welcomed && ws.readyState !== WebSocket.OPEN) return;
      if (isBinary && !welcomed) {
        refuseUnproven('a data frame');
        return;
      }
      if (isBinary) {
        const data = decodeDataFragments(Array.isArray(raw) ? raw : [rawBuffer(raw)]);
        if (!data) {
          this.handlers.log('malformed data frame from the gateway; closing');
          ws.close(1008, 'protocol_error');
          return;
        }
        // Data for a request that already ended (cancelled, failed) is dropped.
        const target = this.inflight.get(data.id);
        if (target && !target.stream.deliver({ type: 'data', payload: data.payload, bytes: data.bytes })) {
          this.refuseStream(ws, data.id);
        }
        return;
      }
      let frame: GatewayFrame;
      try {
        frame = GatewayFrame.parse(JSON.parse(rawBuffer(raw).toString()));
      } catch {
        this.handlers.log('malformed frame from the gateway; closing');
        ws.close(1008, 'protocol_error');
        return;
      }
      if (!welcomed && frame.type !== 'challenge' && frame.type !== 'welcome' && frame.type !== 'error') {
        refuseUnproven(`a ${frame.type} frame`);
        return;
      }
      switch (frame.type) {
        case 'challenge': {
          if (transcript || welcomed) {
            refuseUnproven('a second challenge');
            return;
          }
          if (frame.protocol !== PROTOCOL_VERSION) {
            this.handlers.log(
              `the gateway speaks protocol ${frame.protocol}, this agent ${PROTOCOL_VERSION}: upgrade the older side`,
            );
            ws.close(4400, 'protocol_error');
            return;
          }
          transcript = {
            protocol: PROTOCOL_VERSION,
            machineId: this.state.machine_id,
            gatewayNonce: frame.nonce,
            agentNonce: newAgentNonce(),
          };
          const signature = sign(null, Buffer.from(agentAuthText(transcript)), this.key);
          this.sendOn(ws, {
            type: 'auth',
            machine_id: this.state.machine_id,
            nonce: transcript.agentNonce,
            signature: signature.toString('base64'),
            info: agentInfo(),
          });
          return;
        }
        case 'welcome':
          if (welcomed || !transcript) {
            refuseUnproven(welcomed ? 'a second welcome' : 'a welcome without a challenge');
            return;
          }
          if (
            frame.machine_id !== this.state.machine_id ||
            !gatewayProofValid(this.gatewayKey, transcript, frame.proof)
          ) {
            // Not the gateway we joined (or a replayed welcome): close, and retry later with backoff.
            this.handlers.log(
              `the gateway at ${gatewayUrl} failed to prove the identity pinned at join; refusing it (unauthenticated)`,
            );
            ws.close(4401, 'unauthenticated');
            return;
          }
          welcomed = true;
          clearTimeout(handshakeTimer);
          if (frame.gateways) this.learnGateways(gatewayUrl, frame.gateways);
          heartbeatMs = frame.heartbeat_ms;
          this.attempt = 0;
          this.live = ws;
          this.armWatchdog(ws, heartbeatMs);
          this.handlers.log(`connected to ${gatewayUrl} as ${frame.machine_id}`);
          this.handlers.onConnected((f) => this.sendOn(ws, f));
          this.connectedOnce?.();
          this.connectedOnce = null;
          return;
        case 'request': {
          // Two requests under one id would share (and then lose) one cancel and one stream: the second runs nothing.
          if (this.inflight.has(frame.id)) {
            this.handlers.log(
              `refused request ${frame.id} (${frame.op}): that id is already in flight (protocol_error)`,
            );
            this.sendOn(ws, {
              type: 'error',
              id: frame.id,
              error: { code: 'protocol_error', message: `request id "${frame.id}" is already in flight` },
            });
            return;
          }
          if (this.inflight.size >= MAX_INFLIGHT_REQUESTS) {
            this.handlers.log(`refused request ${frame.id} (${frame.op}): ${MAX_INFLIGHT_REQUESTS} already running`);
            this.sendOn(ws, {
              type: 'error',
              id: frame.id,
              error: {
                code: 'rate_limited',
                message: `this machine already runs ${MAX_INFLIGHT_REQUESTS} requests; retry when one ends`,
                details: { max: MAX_INFLIGHT_REQUESTS },
              },
            });
            return;
          }
          const controller = new AbortController();
          const stream = new RequestStream((f, written) => this.sendBinaryOn(ws, f, written));
          this.inflight.set(frame.id, { controller, stream });
          void this.handlers
            .onRequest(frame, (f) => this.sendOn(ws, f), controller.signal, stream)
            .catch((err: unknown) => {
              this.handlers.log(`request ${frame.id} (${frame.op}) failed: ${String(err)}`);
              this.sendOn(ws, { type: 'error', id: frame.id, error: { code: 'internal', message: 'internal error' } });
            })
            .finally(() => this.inflight.delete(frame.id));
          return;
        }
        case 'cancel':
          this.inflight.get(frame.id)?.controller.abort();
          return;
        case 'credit':
        case 'entry':
        case 'entry_end':
        case 'stream_end': {
          const target = this.inflight.get(frame.id);
          if (target && !target.stream.deliver(frame)) this.refuseStream(ws, frame.id);
          return;
        }
        case 'error':
          this.handlers.log(`gateway refused: ${frame.error.code}: ${frame.error.message}`);
          return;
      }
    });
  }

  /**
   * The gateway pushed more stream frames at a request than it could take (one that takes no stream, or one that
   * did not ask yet): a protocol error. Closing, rather than buffering them, keeps a rogue from filling memory.
   */
  private refuseStream(ws: WebSocket, id: string): void {
    this.handlers.log(
      `the gateway pushed stream frames at request ${id} that it did not ask for; closing (protocol_error)`,
    );
    this.sendOn(ws, {
      type: 'error',
      error: { code: 'protocol_error', message: `unrequested stream frames for "${id}"` },
    });
    ws.close(1008, 'protocol_error');
  }

  /** A proven gateway named its cluster: keep the list (state file, via the handler) for the next reconnect. */
  private learnGateways(connectedTo: string, named: readonly string[]): void {
    const next = gatewayCandidates(this.state, [connectedTo, ...named]);
    this.current = Math.max(0, next.indexOf(connectedTo));
    const changed = next.join('\n') !== this.candidates.join('\n');
    this.candidates = next;
    // The first is always the joined URL (kept in `gateway_url`); the others go to the state file.
    if (changed) this.handlers.onGateways?.(next.slice(1));
  }

  /** tls `checkServerIdentity`: the usual host-name check, then the pin taken at join. */
  private checkPin(host: string, cert: PeerCertificate): Error | undefined {
    const usual = checkServerIdentity(host, cert);
    if (usual) return usual;
    if (certificatePin(cert) === this.tlsPin) return undefined;
    this.handlers.log(
      `the TLS certificate of ${this.gatewayUrl} is not the one pinned at join; refusing it (unauthenticated)`,
    );
    return new Error('the gateway certificate does not match the pin taken at join');
  }
}
