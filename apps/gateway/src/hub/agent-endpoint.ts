import { createPublicKey, verify } from 'node:crypto';
import { AgentFrame, agentAuthText, decodeDataFragments, PROTOCOL_VERSION } from '@letkite/protocol';
import type { RawData, WebSocket } from 'ws';
import type { Store } from '../store/types';
import type { MachineNetworkStore } from '../wake/machine-network-store';
import { AgentSession, newNonce } from './agent-session';
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
  /** Called when the handshake settles: welcome sent, or the socket closed first (handshake-admission.ts). */
  onHandshakeSettled?: () => void;
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
 * Serves one agent WebSocket: challenge → signed auth → welcome with the gateway's own proof (the identity key
 * signs both nonces, the machine id and the protocol), then hands frames to an AgentSession.
 * A malformed frame at any point closes this socket only; the gateway keeps serving everyone else.
 */
export function handleAgentSocket(ws: WebSocket, deps: AgentEndpointDeps): void {
  const nonce = newNonce();
  let session: AgentSession | null = null;
  let handshaking = false;

  const refuse = (code: 'unauthenticated' | 'protocol_error', message: string, closeCode: number) => {
    if (ws.readyState === ws.OPEN) {
      ws.send(JSON.stringify({ type: 'error', error: { code, message } }));
      ws.close(closeCode, code);
    }
  };

  const handshakeTimer = setTimeout(
    () => refuse('unauthenticated', 'no authentication within the time limit', 4401),
    deps.handshakeTimeoutMs ?? 10_000,
  );

  // Binary messages (data frames) arrive as their fragments, views of what the socket read: relayed with no copy.
  ws.binaryType = 'fragments';
  ws.on('error', (err) => deps.log(`agent socket error: ${err.message}`));
  ws.on('close', () => {
    clearTimeout(handshakeTimer);
    deps.onHandshakeSettled?.();
  });

  ws.on('message', (data, isBinary) => {
    // Binary messages are data frames of a streamed call (transfers), only after the handshake.
    const dataFrame = isBinary && session && Array.isArray(data) ? decodeDataFragments(data) : null;
    if (dataFrame && session) {
      session.handleData(dataFrame.id, dataFrame.bytes, dataFrame.frame);
      return;
    }
    const frame = parseFrame(data, isBinary);
    const claimed = session || frame ? undefined : claimedProtocol(data, isBinary);
    if (typeof claimed === 'number' && claimed !== PROTOCOL_VERSION) {
      refuse('protocol_error', `protocol ${claimed} is not supported (gateway speaks ${PROTOCOL_VERSION})`, 4400);
      return;
    }
    if (!frame) {
      deps.log(`agent ${session?.machineId ?? '(unauthenticated)'}: malformed frame, closing its socket`);
      refuse('protocol_error', 'malformed frame', 1008);
      return;
    }
    if (session) {
      session.handleFrame(frame);
      return;
    }
    if (frame.type !== 'auth' || handshaking) {
      refuse('protocol_error', 'expected an auth frame', 1008);
      return;
    }
    handshaking = true;
    void authenticate(frame);
  });

  async function authenticate(frame: Extract<AgentFrame, { type: 'auth' }>): Promise<void> {
    const transcript = {
      protocol: PROTOCOL_VERSION,
      machineId: frame.machine_id,
      gatewayNonce: nonce,
      agentNonce: frame.nonce,
    };
    const machine = await deps.store.getMachine(frame.machine_id);
    if (!machine || !signatureValid(machine.publicKey, agentAuthText(transcript), frame.signature)) {
      deps.log(`agent auth refused for machine id "${frame.machine_id}"`);
      refuse('unauthenticated', 'unknown machine or bad signature', 4401);
      return;
    }
    if (frame.info.protocol !== PROTOCOL_VERSION) {
      refuse(
        'protocol_error',
        `protocol ${frame.info.protocol} is not supported (gateway speaks ${PROTOCOL_VERSION})`,
        4400,
      );
      return;
    }
    clearTimeout(handshakeTimer);
    if (ws.readyState !== ws.OPEN) return;
    const s = new AgentSession(machine.id, ws, deps.heartbeatMs, {
      log: deps.log,
      onClose: () => {
        deps.hub.detach(s);
        deps.log(`agent ${machine.id} (${machine.name}) disconnected`);
      },
      onReport: (report) => {
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
      },
    });
    session = s;
    try {
      await deps.hub.attach(s);
    } catch (err) {
      // The cluster could not record who holds the machine (NATS down): no welcome, the agent retries later.
      deps.log(`agent ${machine.id}: registering its socket failed: ${String(err)}`);
      s.close(1011, 'try again later');
      return;
    }
    const seen = {
      hostname: frame.info.hostname,
      os: frame.info.os,
      osRelease: frame.info.os_release ?? null,
      arch: frame.info.arch,
      agentVersion: frame.info.version,
    };
    let seenWrittenAt = deps.now().getTime();
    await deps.store.recordAgentSeen(machine.id, { ...seen, at: new Date(seenWrittenAt).toISOString() });
    if (frame.info.network && deps.machineNetworks) {
      // Untrusted like the rest of the info: only ever used as a MAC to put in a magic packet and subnets to match.
      await deps.machineNetworks
        .record({
          machineId: machine.id,
          accountId: machine.accountId,
          network: frame.info.network,
          reportedAt: new Date(seenWrittenAt).toISOString(),
        })
        .catch((err: unknown) => deps.log(`recording the network of ${machine.id} failed: ${String(err)}`));
    }
    const seenEvery = seenWriteIntervalMs(deps.heartbeatMs);
    ws.on('pong', () => {
      const at = deps.now().getTime();
      if (at - seenWrittenAt < seenEvery) return;
      seenWrittenAt = at;
      deps.store
        .recordAgentSeen(machine.id, { ...seen, at: new Date(at).toISOString() })
        .catch((err: unknown) => deps.log(`recording the heartbeat of ${machine.id} failed: ${String(err)}`));
    });
    s.send({
      type: 'welcome',
      machine_id: machine.id,
      heartbeat_ms: deps.heartbeatMs,
      proof: deps.gatewayIdentity.proveHandshake(transcript),
      ...(deps.gateways ? { gateways: [...deps.gateways()] } : {}),
    });
    deps.onHandshakeSettled?.();
    deps.log(`agent ${machine.id} (${machine.name}) connected from ${frame.info.hostname}`);
  }

  ws.send(JSON.stringify({ type: 'challenge', nonce, protocol: PROTOCOL_VERSION }));
}
