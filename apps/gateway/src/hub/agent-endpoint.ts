import { createPublicKey, verify } from 'node:crypto';
import { AgentFrame, agentAuthText, decodeDataFragments, PROTOCOL_VERSION } from '@letkite/protocol';
import type { RawData, WebSocket } from 'ws';
import type { Machine, Store } from '../store/types';
import type { MachineNetworkStore } from '../wake/machine-network-store';
import { AgentSession, type AgentSessionEvents, newNonce } from './agent-session';
import type { GatewayIdentity } from './gateway-identity';

/** Where the endpoint registers sockets: LocalHub, or NatsHub (which claims the machine cluster-wide first). */
export interface SocketRegistry {
  attach(session: AgentSession): boolean | Promise<boolean>;
  detach(session: AgentSession): void;
}

export interface AgentEndpointDeps {
  store: Store;
  hub: SocketRegistry;
  /** Where the interfaces an agent reports on connect go (Wake-on-LAN); absent: not kept. */
  machineNetworks?: MachineNetworkStore;
  /** Cluster mode: the live gateways' public URLs, named in the welcome (gateway-registry.ts). */
  gateways?: () => readonly string[];
  now: () => Date;
  log: (msg: string) => void;
  heartbeatMs: number;
  /** The identity key agents pinned at enrollment; every welcome carries its proof. */
  gatewayIdentity: GatewayIdentity;
  /** How long an agent has to answer the challenge. */
  handshakeTimeoutMs?: number;
}

/**
 * Serves one agent WebSocket; `onHandshakeSettled` is called when its handshake settles: welcome sent, or the
 * socket closed first (handshake-admission.ts).
 */
export type AgentEndpoint = (ws: WebSocket, onHandshakeSettled?: () => void) => void;

/** What the agent reported about itself on connect, written again as its "last seen" follows the heartbeats. */
interface AgentSeen {
  hostname: string;
  os: string;
  osRelease: string | null;
  arch: string;
  agentVersion: string;
}

/**
 * "Last seen" follows the heartbeats (each ping's pong), written at most every other heartbeat and never more
 * often than every 30 s per machine, so a large fleet does not turn heartbeats into a write load.
 */
export function seenWriteIntervalMs(heartbeatMs: number): number {
  return Math.min(30_000, 2 * heartbeatMs);
}

function parseFrame(data: RawData, isBinary: boolean): AgentFrame | null {
  if (isBinary) return null;
  let json: unknown;
  try {
    json = JSON.parse(data.toString());
  } catch {
    return null;
  }
  const parsed = AgentFrame.safeParse(json);
  return parsed.success ? parsed.data : null;
}

function signatureValid(publicKeyB64: string, text: string, signatureB64: string): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKeyB64, 'base64'), format: 'der', type: 'spki' });
    return verify(null, Buffer.from(text), key, Buffer.from(signatureB64, 'base64'));
  } catch {
    return false;
  }
}

/** The protocol an unparsable auth frame claims, to tell an agent of another version why it is refused. */
function claimedProtocol(data: RawData, isBinary: boolean): unknown {
  if (isBinary) return undefined;
  try {
    return (JSON.parse(data.toString()) as { info?: { protocol?: unknown } }).info?.protocol;
  } catch {
    return undefined;
  }
}

/**
 * One connected agent's part of the endpoint: what it needs after the handshake, as fields of one object whose
 * methods the session calls (no closures per socket: at tens of thousands of idle agents each one counts).
 */
class ConnectedAgent implements AgentSessionEvents {
  private seenWrittenAt: number;

  constructor(
    private readonly deps: AgentEndpointDeps,
    /** Only the fields it needs, not the machine's row (its public key, labels, ceiling) for as long as it is online. */
    private readonly machine: Pick<Machine, 'id' | 'name' | 'accountId'>,
    private readonly seen: AgentSeen,
    at: number,
  ) {
    this.seenWrittenAt = at;
  }

  log(msg: string): void {
    this.deps.log(msg);
  }

  onClose(session: AgentSession): void {
    this.deps.hub.detach(session);
    this.deps.log(`agent ${this.machine.id} (${this.machine.name}) disconnected`);
  }

  onReport(report: Extract<AgentFrame, { type: 'report' }>): void {
    const { deps, machine } = this;
    void deps.store
      .recordCeiling(
        machine.id,
        { ceiling: report.ceiling, source: report.ceiling_source, error: report.ceiling_error ?? null },
        report.ceiling_source === 'error'
          ? {
              accountId: machine.accountId,
              at: deps.now().toISOString(),
              actor: `agent:${machine.id}`,
              action: 'machine.ceiling_error',
              target: machine.id,
              outcome: 'blocked_by_ceiling',
              details: { error: report.ceiling_error ?? '' },
            }
          : null,
      )
      .catch((err: unknown) => deps.log(`recording the ceiling of ${machine.id} failed: ${String(err)}`));
  }

  onPong(): void {
    const at = this.deps.now().getTime();
    if (at - this.seenWrittenAt < seenWriteIntervalMs(this.deps.heartbeatMs)) return;
    this.seenWrittenAt = at;
    this.deps.store
      .recordAgentSeen(this.machine.id, { ...this.seen, at: new Date(at).toISOString() })
      .catch((err: unknown) => this.deps.log(`recording the heartbeat of ${this.machine.id} failed: ${String(err)}`));
  }
}

/** After the handshake: data frames and JSON frames go to the session; a malformed frame closes this socket. */
function listenAsSession(ws: WebSocket, session: AgentSession, log: (msg: string) => void): void {
  ws.on('message', (data, isBinary) => {
    // Binary messages are data frames of a streamed call (transfers), arriving as views of what the socket read.
    const dataFrame = isBinary && Array.isArray(data) ? decodeDataFragments(data) : null;
    if (dataFrame) {
      session.handleData(dataFrame.id, dataFrame.bytes, dataFrame.frame);
      return;
    }
    const frame = parseFrame(data, isBinary);
    if (!frame) {
      log(`agent ${session.machineId}: malformed frame, closing its socket`);
      session.fail('protocol_error', 'malformed frame');
      return;
    }
    session.handleFrame(frame);
  });
}

/**
 * The agent endpoint: challenge → signed auth → welcome with the gateway's own proof (the identity key signs both
 * nonces, the machine id and the protocol), then frames go to an AgentSession. A malformed frame at any point
 * closes that socket only; the gateway keeps serving everyone else. Everything a socket needs only during its
 * handshake (nonce, timer, listeners) is released once the welcome is sent.
 */
export function createAgentEndpoint(deps: AgentEndpointDeps): AgentEndpoint {
  // One listener for every socket's errors, rather than one closure each.
  const onError = (err: Error) => deps.log(`agent socket error: ${err.message}`);
  return (ws, onHandshakeSettled) => {
    ws.on('error', onError);
    handshake(ws, deps, onHandshakeSettled ?? (() => undefined));
  };
}

function refuse(ws: WebSocket, code: 'unauthenticated' | 'protocol_error', message: string, closeCode: number): void {
  if (ws.readyState === ws.OPEN) {
    ws.send(JSON.stringify({ type: 'error', error: { code, message } }));
    ws.close(closeCode, code);
  }
}

function handshake(ws: WebSocket, deps: AgentEndpointDeps, settled: () => void): void {
  const nonce = newNonce();
  let handshaking = false;
  const timer = setTimeout(
    () => refuse(ws, 'unauthenticated', 'no authentication within the time limit', 4401),
    deps.handshakeTimeoutMs ?? 10_000,
  );
  const onClose = () => {
    clearTimeout(timer);
    settled();
  };
  const onMessage = (data: RawData, isBinary: boolean) => {
    const frame = parseFrame(data, isBinary);
    const claimed = frame ? undefined : claimedProtocol(data, isBinary);
    if (typeof claimed === 'number' && claimed !== PROTOCOL_VERSION) {
      refuse(ws, 'protocol_error', `protocol ${claimed} is not supported (gateway speaks ${PROTOCOL_VERSION})`, 4400);
      return;
    }
    if (!frame) {
      deps.log('agent (unauthenticated): malformed frame, closing its socket');
      refuse(ws, 'protocol_error', 'malformed frame', 1008);
      return;
    }
    if (frame.type !== 'auth' || handshaking) {
      refuse(ws, 'protocol_error', 'expected an auth frame', 1008);
      return;
    }
    handshaking = true;
    void authenticate(ws, deps, frame, nonce, {
      authenticated: () => {
        clearTimeout(timer);
        // From here the session reads this socket's frames.
        ws.off('message', onMessage);
      },
      welcomed: () => {
        ws.off('close', onClose);
        settled();
      },
    });
  };
  // Binary messages (data frames) arrive as their fragments, views of what the socket read: relayed with no copy.
  ws.binaryType = 'fragments';
  ws.on('close', onClose);
  ws.on('message', onMessage);
  ws.send(JSON.stringify({ type: 'challenge', nonce, protocol: PROTOCOL_VERSION }));
}

async function authenticate(
  ws: WebSocket,
  deps: AgentEndpointDeps,
  frame: Extract<AgentFrame, { type: 'auth' }>,
  nonce: string,
  steps: { authenticated: () => void; welcomed: () => void },
): Promise<void> {
  const transcript = {
    protocol: PROTOCOL_VERSION,
    machineId: frame.machine_id,
    gatewayNonce: nonce,
    agentNonce: frame.nonce,
  };
  const machine = await deps.store.getMachine(frame.machine_id);
  if (!machine || !signatureValid(machine.publicKey, agentAuthText(transcript), frame.signature)) {
    deps.log(`agent auth refused for machine id "${frame.machine_id}"`);
    refuse(ws, 'unauthenticated', 'unknown machine or bad signature', 4401);
    return;
  }
  if (frame.info.protocol !== PROTOCOL_VERSION) {
    refuse(
      ws,
      'protocol_error',
      `protocol ${frame.info.protocol} is not supported (gateway speaks ${PROTOCOL_VERSION})`,
      4400,
    );
    return;
  }
  steps.authenticated();
  if (ws.readyState !== ws.OPEN) return;
  const seen: AgentSeen = {
    hostname: frame.info.hostname,
    os: frame.info.os,
    osRelease: frame.info.os_release ?? null,
    arch: frame.info.arch,
    agentVersion: frame.info.version,
  };
  const at = deps.now().getTime();
  const agent = new ConnectedAgent(
    deps,
    { id: machine.id, name: machine.name, accountId: machine.accountId },
    seen,
    at,
  );
  const s = new AgentSession(machine.id, ws, deps.heartbeatMs, agent);
  listenAsSession(ws, s, deps.log);
  try {
    await deps.hub.attach(s);
  } catch (err) {
    // The cluster could not record who holds the machine (NATS down): no welcome, the agent retries later.
    deps.log(`agent ${machine.id}: registering its socket failed: ${String(err)}`);
    s.close(1011, 'try again later');
    return;
  }
  await deps.store.recordAgentSeen(machine.id, { ...seen, at: new Date(at).toISOString() });
  if (frame.info.network && deps.machineNetworks) {
    // Untrusted like the rest of the info: only ever used as a MAC to put in a magic packet and subnets to match.
    await deps.machineNetworks
      .record({
        machineId: machine.id,
        accountId: machine.accountId,
        network: frame.info.network,
        reportedAt: new Date(at).toISOString(),
      })
      .catch((err: unknown) => deps.log(`recording the network of ${machine.id} failed: ${String(err)}`));
  }
  s.send({
    type: 'welcome',
    machine_id: machine.id,
    heartbeat_ms: deps.heartbeatMs,
    proof: deps.gatewayIdentity.proveHandshake(transcript),
    ...(deps.gateways ? { gateways: [...deps.gateways()] } : {}),
  });
  steps.welcomed();
  deps.log(`agent ${machine.id} (${machine.name}) connected from ${frame.info.hostname}`);
}
