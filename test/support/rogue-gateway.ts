import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentFrame, decodeDataFrame, gatewayProofText, PROTOCOL_VERSION } from '@letkite/protocol';
import { type WebSocket, WebSocketServer } from 'ws';
import { waitFor } from './processes';

export interface RogueAnswer {
  ok: boolean;
  result?: unknown;
  /** The agent's error; `{code: 'closed'}` when the socket closed (or was never trusted) before any answer. */
  error?: { code: string; message: string; details?: Record<string, unknown> };
  chunks: { stream: string; data: string }[];
}

export interface RogueRequest {
  op: string;
  params: unknown;
  context?: Record<string, unknown>;
}

export interface RogueOptions {
  /**
   * Not the gateway the agent pinned: `agentState()` pins a key this process does not hold, and the handshake is
   * signed with its own key. The agent must obey nothing it sends.
   */
  impostor?: boolean;
  /** Sent right after the challenge, before the handshake completes: the agent must not run it. */
  requestBeforeHandshake?: RogueRequest;
  /** Sent in the same breath as the welcome (before the agent can answer it): must not run if the proof fails. */
  requestAfterWelcome?: RogueRequest;
  /** Bind this port on 127.0.0.1 (e.g. a real gateway's, while it is down); 0 (default) picks a free one. */
  port?: number;
  /** Challenge with this nonce instead of a fresh one (replaying a recorded handshake). */
  challengeNonce?: string;
  /** Answer every auth with exactly this welcome frame (a recorded one) instead of signing a fresh proof. */
  welcome?: unknown;
  /** Never answer an auth: hold the socket open after the challenge (the agent must give up and retry). */
  stall?: boolean;
  /** Only for `agentState()` of an impostor: the key the agent pins (defaults to a fresh one nobody holds). */
  pinnedKey?: string;
}

/**
 * A test process that speaks the agent protocol AS A GATEWAY, to prove what the agent refuses on its own authority.
 *
 * - `RogueGateway.start()` is a COMPROMISED gateway: it holds the identity key that `agentState()` pins, completes
 *   the handshake correctly (a fresh proof over both nonces) and then sends whatever requests it likes. What the
 *   agent refuses here, it refuses without trusting the gateway.
 * - `RogueGateway.start({ impostor: true })` does NOT hold the pinned key: `agentState()` pins another key and the
 *   welcome carries a proof by the rogue's own key. The agent must close the socket and obey nothing.
 * - `{ requestBeforeHandshake: {op, params, context} }` sends that request right after the challenge;
 *   `{ requestAfterWelcome }` sends one right behind the welcome, before the agent could have judged it.
 * - `{ port, challengeNonce, welcome }` replay a recorded handshake on a real gateway's port; `{ stall }` never
 *   answers an auth.
 *
 * API: `.url`; `.agentState(machineId?)` (a state file's contents pointing here); `.welcomed()` (an agent's auth
 * arrived and was answered); `.connected()` (the agent accepted the welcome: its ceiling report arrived);
 * `.request(op, params, context?, id?)` (on the newest socket; answers `{ok:false, error:{code:'closed'}}` if the
 * socket closes first); `.sendRaw(frame)` (any JSON value, or a Buffer as a binary message, on the newest socket);
 * `.sendText(text)` (a text message exactly as given, e.g. malformed JSON); `.streamed(id)` (the entry, entry_end and
 * credit frames and the data-frame payloads the agent sent for a request, in order: what a transfer source streams);
 * `.reports` (ceiling reports); `.earlyAnswers`; `.auths` (auth frames received); `.closes` (close codes of agent sockets);
 * `.close()`.
 */
export class RogueGateway {
  /** The newest socket whose agent accepted our welcome (sent a report after it). */
  private socket: WebSocket | null = null;
  /** The newest socket, whatever its state. */
  private latest: WebSocket | null = null;
  private welcomes = 0;
  private nextId = 1;
  private readonly waiting = new Map<
    string,
    { ws: WebSocket; resolve: (a: RogueAnswer) => void; chunks: RogueAnswer['chunks'] }
  >();
  readonly reports: AgentFrame[] = [];
  readonly auths: Extract<AgentFrame, { type: 'auth' }>[] = [];
  readonly closes: number[] = [];
  /**
   * How the agent answered `requestBeforeHandshake` / `requestAfterWelcome` (`error.code` 'closed' when it only
   * closed the socket).
   */
  readonly earlyAnswers: RogueAnswer[] = [];
  /** What agents streamed per request id: entry / entry_end / credit frames and binary data payloads, in order. */
  private readonly streams = new Map<string, (AgentFrame | { type: 'data'; payload: Buffer })[]>();
  /** The identity key this rogue signs welcomes with (the pinned one unless impostor). */
  private readonly key: KeyObject;
  private readonly pinned: string;

  private constructor(
    private readonly server: Server,
    private readonly wss: WebSocketServer,
    private readonly options: RogueOptions,
  ) {
    this.key = generateKeyPairSync('ed25519').privateKey;
    const own = createPublicKey(this.key).export({ format: 'der', type: 'spki' }).toString('base64');
    this.pinned = options.impostor
      ? (options.pinnedKey ??
        generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64'))
      : own;
  }

  static async start(options: RogueOptions = {}): Promise<RogueGateway> {
    const server = createServer((_req, res) => res.writeHead(404).end());
    const wss = new WebSocketServer({ server, path: '/agent/v1' });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const rogue = new RogueGateway(server, wss, options);
    wss.on('connection', (ws) => rogue.accept(ws));
    return rogue;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** An agent identity (state file contents) that points at this rogue gateway and pins its (or another) key. */
  agentState(machineId = 'mch_rogue'): Record<string, unknown> {
    const { privateKey } = generateKeyPairSync('ed25519');
    return {
      gateway_url: `${this.url}/`,
      machine_id: machineId,
      name: 'rogue-target',
      private_key_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      insecure: false,
      gateway_public_key: this.pinned,
    };
  }

  /** Waits until an agent's auth arrived and was answered with a welcome. */
  async welcomed(): Promise<void> {
    await waitFor('an agent authenticated to the rogue gateway', () => this.welcomes > 0);
  }

  /** Waits until an agent accepted the welcome (it reports its ceiling right after). */
  async connected(): Promise<void> {
    await waitFor('agent connected to the rogue gateway', () => this.socket !== null);
  }

  request(
    op: string,
    params: unknown,
    context: Record<string, unknown> = { policy: 'full' },
    id = `x${this.nextId++}`,
  ): Promise<RogueAnswer> {
    const ws = this.socket ?? this.latest;
    return new Promise((resolve) => {
      if (!ws || ws.readyState !== ws.OPEN) {
        resolve({ ok: false, error: { code: 'closed', message: 'no open agent socket' }, chunks: [] });
        return;
      }
      this.waiting.set(id, { ws, resolve, chunks: [] });
      ws.send(JSON.stringify({ type: 'request', id, op, params, context }));
    });
  }

  /** Sends anything on the newest socket: a JSON value as a text message, a Buffer as a binary one. */
  sendRaw(frame: unknown): void {
    const ws = this.latest;
    if (!ws || ws.readyState !== ws.OPEN) return;
    if (Buffer.isBuffer(frame)) ws.send(frame, { binary: true });
    else ws.send(JSON.stringify(frame));
  }

  /** Sends a text message exactly as given (malformed JSON, say) on the newest socket. */
  sendText(text: string): void {
    const ws = this.latest;
    if (ws && ws.readyState === ws.OPEN) ws.send(text);
  }

  /** The stream frames and data payloads the agent sent for request `id` so far. */
  streamed(id: string): readonly (AgentFrame | { type: 'data'; payload: Buffer })[] {
    return this.streams.get(id) ?? [];
  }

  private record(id: string, item: AgentFrame | { type: 'data'; payload: Buffer }): void {
    const list = this.streams.get(id) ?? [];
    list.push(item);
    this.streams.set(id, list);
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private accept(ws: WebSocket): void {
    this.latest = ws;
    const challengeNonce = this.options.challengeNonce ?? randomBytes(32).toString('base64url');
    let welcomed = false;
    ws.on('close', (code) => {
      this.closes.push(code);
      if (this.socket === ws) this.socket = null;
      for (const [id, w] of this.waiting) {
        if (w.ws !== ws) continue;
        this.waiting.delete(id);
        w.resolve({ ok: false, error: { code: 'closed', message: `socket closed (${code})` }, chunks: w.chunks });
      }
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        const decoded = decodeDataFrame(
          new Uint8Array(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer)),
        );
        if (decoded) this.record(decoded.id, { type: 'data', payload: Buffer.from(decoded.payload) });
        return;
      }
      let frame: AgentFrame;
      try {
        frame = JSON.parse(data.toString()) as AgentFrame;
      } catch {
        return;
      }
      switch (frame.type) {
        case 'auth': {
          this.auths.push(frame);
          if (this.options.stall) return;
          // A rogue gateway does not care who the agent is; it only proves (or fakes) its own identity.
          const welcome = this.options.welcome ?? {
            type: 'welcome',
            machine_id: frame.machine_id,
            heartbeat_ms: 60_000,
            proof: sign(
              null,
              Buffer.from(
                gatewayProofText({
                  protocol: PROTOCOL_VERSION,
                  machineId: frame.machine_id,
                  gatewayNonce: challengeNonce,
                  agentNonce: frame.nonce,
                }),
              ),
              this.key,
            ).toString('base64'),
          };
          ws.send(JSON.stringify(welcome));
          if (this.options.requestAfterWelcome) this.sendRequest(ws, this.options.requestAfterWelcome);
          welcomed = true;
          this.welcomes += 1;
          return;
        }
        case 'report':
          this.reports.push(frame);
          if (welcomed) this.socket = ws;
          return;
        case 'chunk':
          this.waiting.get(frame.id)?.chunks.push({ stream: frame.stream, data: frame.data });
          return;
        case 'entry':
        case 'entry_end':
        case 'credit':
          this.record(frame.id, frame);
          return;
        case 'response': {
          const w = this.waiting.get(frame.id);
          this.waiting.delete(frame.id);
          w?.resolve({ ok: true, result: frame.result, chunks: w.chunks });
          return;
        }
        case 'error': {
          if (frame.id === undefined) return;
          const w = this.waiting.get(frame.id);
          this.waiting.delete(frame.id);
          w?.resolve({ ok: false, error: frame.error, chunks: w.chunks });
          return;
        }
      }
    });
    ws.send(JSON.stringify({ type: 'challenge', nonce: challengeNonce, protocol: PROTOCOL_VERSION }));
    if (this.options.requestBeforeHandshake) this.sendRequest(ws, this.options.requestBeforeHandshake);
  }

  /** A scripted request whose answer (or `closed`) lands in `earlyAnswers`. */
  private sendRequest(ws: WebSocket, r: RogueRequest): void {
    const id = `early${this.nextId++}`;
    this.waiting.set(id, { ws, resolve: (a) => this.earlyAnswers.push(a), chunks: [] });
    ws.send(
      JSON.stringify({ type: 'request', id, op: r.op, params: r.params, context: r.context ?? { policy: 'full' } }),
    );
  }
}
