/**
 * Simulated agents for the scale benchmarks: each one enrolls with a real one-time join token over
 * `POST /agent/v1/enroll`, keeps its own Ed25519 key, and connects over the real protocol (challenge → signed auth
 * → welcome whose gateway proof it verifies, then a ceiling report), answering the gateway's pings as the real
 * agent's socket does. It serves no requests: it measures what one idle machine costs a gateway.
 *
 * Sockets are spread over many loopback source addresses (127.1.x.y) so a large fleet never runs out of ephemeral
 * ports on one address pair. Reconnects use the real agent's backoff (full jitter) so a storm looks like a fleet.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign, verify } from 'node:crypto';
import {
  AGENT_WS_PATH,
  agentAuthText,
  EnrollResponse,
  gatewayProofText,
  type HandshakeTranscript,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
} from '@letkite/protocol';
import WebSocket from 'ws';
import { backoffDelay } from '../../apps/agent/src/connection';

/** One simulated machine: its id, its key, and the gateway key it pinned at enrollment. */
export interface SimMachine {
  machineId: string;
  privateKey: KeyObject;
  gatewayKey: KeyObject;
  /** The loopback address this machine dials from. */
  localAddress: string;
}

/** The loopback source address for the i-th machine: 1,000 machines per address. */
export function loopbackAddressFor(i: number): string {
  const n = Math.floor(i / 1000);
  return `127.1.${Math.floor(n / 250)}.${(n % 250) + 1}`;
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function inParallel<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>) {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Enrolls one machine with a join token, as `letkite agent join` does. */
export async function enrollSimMachine(gatewayUrl: string, joinToken: string, i: number): Promise<SimMachine> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const enroll = () =>
    fetch(`${gatewayUrl}/agent/v1/enroll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        join_token: joinToken,
        public_key: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
        info: { hostname: `sim-${i}`, os: 'linux', arch: 'x64', version: 'bench', protocol: PROTOCOL_VERSION },
        name: `sim-${i}`,
      }),
    });
  // A kept-alive connection the gateway closes just as a request goes out fails before any answer ("other side
  // closed"): sent again once on a new connection. A token the gateway did consume then fails loudly as reused.
  const res = await enroll().catch(async (err: unknown) => {
    if (!(err instanceof TypeError)) throw err;
    await new Promise((r) => setTimeout(r, 200));
    return enroll();
  });
  if (!res.ok) throw new Error(`enroll ${i} failed: ${res.status} ${await res.text()}`);
  const body = EnrollResponse.parse(await res.json());
  return {
    machineId: body.machine_id,
    privateKey,
    gatewayKey: createPublicKey({ key: Buffer.from(body.gateway_public_key, 'base64'), format: 'der', type: 'spki' }),
    localAddress: loopbackAddressFor(i),
  };
}

/** What happened to one connect attempt. */
type DialOutcome = { ok: true; ws: WebSocket } | { ok: false; reason: string; retryAfterMs?: number };

/** One connect + handshake; resolves once welcomed (proof verified) or refused. */
export function dialSimAgent(wsUrl: string, m: SimMachine, timeoutMs = 30_000): Promise<DialOutcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(wsUrl, {
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: timeoutMs,
      localAddress: m.localAddress,
      perMessageDeflate: false,
      generateMask: (mask) => mask.fill(0),
    });
    const agentNonce = randomBytes(18).toString('base64url');
    let transcript: HandshakeTranscript | null = null;
    let settled = false;
    const finish = (o: DialOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!o.ok) ws.terminate();
      resolve(o);
    };
    const timer = setTimeout(() => finish({ ok: false, reason: 'timeout' }), timeoutMs);
    ws.on('unexpected-response', (_req, res) => {
      const retry = Number(res.headers['retry-after']);
      finish({
        ok: false,
        reason: `http ${res.statusCode}`,
        retryAfterMs: Number.isFinite(retry) ? retry * 1000 : undefined,
      });
    });
    ws.on('error', (err) => finish({ ok: false, reason: err.message }));
    ws.on('close', (code) => finish({ ok: false, reason: `closed ${code}` }));
    ws.on('message', (raw) => {
      const frame = JSON.parse(raw.toString()) as { type: string; nonce?: string; proof?: string };
      if (frame.type === 'challenge' && frame.nonce && !transcript) {
        transcript = { protocol: PROTOCOL_VERSION, machineId: m.machineId, gatewayNonce: frame.nonce, agentNonce };
        const signature = sign(null, Buffer.from(agentAuthText(transcript)), m.privateKey).toString('base64');
        ws.send(
          JSON.stringify({
            type: 'auth',
            machine_id: m.machineId,
            nonce: agentNonce,
            signature,
            info: { hostname: m.machineId, os: 'linux', arch: 'x64', version: 'bench', protocol: PROTOCOL_VERSION },
          }),
        );
      } else if (frame.type === 'welcome' && transcript && frame.proof) {
        const proven = verify(
          null,
          Buffer.from(gatewayProofText(transcript)),
          m.gatewayKey,
          Buffer.from(frame.proof, 'base64'),
        );
        if (!proven) return finish({ ok: false, reason: 'gateway proof did not verify' });
        ws.send(JSON.stringify({ type: 'report', ceiling: null, ceiling_source: 'defaults' }));
        finish({ ok: true, ws });
      } else if (frame.type === 'error') {
        finish({ ok: false, reason: `error frame ${raw.toString().slice(0, 200)}` });
      }
    });
  });
}

/**
 * A fleet of simulated agents that stay connected: each reconnects with the real agent's backoff whenever its
 * socket closes, until `stop()`. `online` counts welcomed sockets.
 */
export class SimFleet {
  online = 0;
  failures = 0;
  readonly failureReasons = new Map<string, number>();
  private readonly sockets = new Set<WebSocket>();
  private stopped = false;

  constructor(
    private readonly wsUrl: string,
    readonly machines: readonly SimMachine[],
    private readonly backoff = { initialMs: 500, maxMs: 30_000 },
  ) {}

  static wsUrlOf(gatewayUrl: string): string {
    return `${gatewayUrl.replace(/^http/, 'ws')}${AGENT_WS_PATH}`;
  }

  /** Connects every machine with at most `concurrency` handshakes in flight; resolves when all are online once. */
  async connectAll(concurrency: number): Promise<void> {
    await inParallel(this.machines, concurrency, (m) => this.keepConnected(m));
  }

  /** Connects one machine (retrying with backoff) and keeps it connected; resolves at its first welcome. */
  private keepConnected(m: SimMachine): Promise<void> {
    return new Promise((firstOnline) => {
      let attempt = 0;
      const dial = async (): Promise<void> => {
        if (this.stopped) return firstOnline();
        const o = await dialSimAgent(this.wsUrl, m);
        if (!o.ok) {
          this.failures++;
          const kind = o.reason.replace(/\d{2,}/g, 'N');
          this.failureReasons.set(kind, (this.failureReasons.get(kind) ?? 0) + 1);
          const delay = Math.max(o.retryAfterMs ?? 0, backoffDelay(attempt++, this.backoff));
          setTimeout(() => void dial(), delay);
          return;
        }
        attempt = 0;
        this.online++;
        this.sockets.add(o.ws);
        o.ws.on('close', () => {
          this.online--;
          this.sockets.delete(o.ws);
          if (!this.stopped) setTimeout(() => void dial(), backoffDelay(attempt++, this.backoff));
        });
        firstOnline();
      };
      void dial();
    });
  }

  /** Closes every socket and stops reconnecting. */
  stop(): void {
    this.stopped = true;
    for (const ws of this.sockets) ws.terminate();
  }
}
