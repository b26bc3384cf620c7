import { createSocket } from 'node:dgram';
import {
  LetKiteError,
  type NetworkReport,
  type ParsedAgentOpParams,
  type RequestContext,
  type WakeSendResult,
} from '@letkite/protocol';
import { ipv4Broadcast, ipv4InSubnet, MAGIC_PACKET_BYTES, magicPacket, WAKE_PORT } from '@letkite/protocol/ops-wake';
import type { CeilingState } from '../ceiling/ceiling-source';
import { authorizeGatedTool } from '../guard/authorize-command';
import { requestPolicy } from '../guard/request-policy';
import { networkReport } from './wake-network';

/** One packet to send: where to, and the local address to send from (which picks the interface). */
export interface WakeTarget {
  interface: string | null;
  broadcast: string;
  bindAddress: string | null;
}

/** Sends one datagram with SO_BROADCAST (tests may inject their own). */
export type SendDatagram = (packet: Uint8Array, target: WakeTarget) => Promise<void>;

export interface WakeDeps {
  interfaces: () => NetworkReport;
  send: SendDatagram;
}

const systemDeps: WakeDeps = { interfaces: () => networkReport(), send: sendBroadcast };

/**
 * wake_send: the agent's own check comes first — the ceiling's `wake` switch (its word is final, whatever the
 * gateway says), then the policy's `approval.tools` for the tool this send serves — and only then one magic packet
 * per target network (ops-wake.ts).
 */
export async function wakeSend(
  params: ParsedAgentOpParams<'wake_send'>,
  context: RequestContext,
  ceiling: CeilingState,
  deps: WakeDeps = systemDeps,
): Promise<WakeSendResult> {
  const rp = requestPolicy(context.policy, ceiling);
  if (!rp.ceiling.wake) {
    throw new LetKiteError('blocked_by_ceiling', "this machine's ceiling does not allow Wake-on-LAN (wake = false)", {
      layer: 'ceiling',
      key: 'wake',
    });
  }
  authorizeGatedTool(rp, params.tool, context);
  const targets = wakeTargets(params, deps.interfaces());
  const packet = magicPacket(params.mac);
  for (const target of targets) await deps.send(packet, target);
  return {
    mac: params.mac,
    sent: targets.map((t) => ({ interface: t.interface, broadcast: t.broadcast, port: WAKE_PORT })),
    bytes: MAGIC_PACKET_BYTES,
  };
}

/**
 * Where the packets go. With `interface`: that interface's networks (or `broadcast` sent from it); with only
 * `broadcast`: from the interface whose network holds it, or wherever the system routes it (a directed broadcast
 * to a routed network, 255.255.255.255); with neither: the broadcast address of every IPv4 network here.
 */
export function wakeTargets(
  params: Pick<ParsedAgentOpParams<'wake_send'>, 'broadcast' | 'interface'>,
  interfaces: NetworkReport,
): WakeTarget[] {
  const networks = interfaces.flatMap((i) => i.ipv4.map((a) => ({ name: i.name, ...a })));
  if (params.interface !== undefined) {
    const own = networks.filter((n) => n.name === params.interface);
    if (own.length === 0) {
      throw new LetKiteError('not_found', `this machine has no interface "${params.interface}" with an IPv4 address`, {
        interface: params.interface,
      });
    }
    if (params.broadcast !== undefined) {
      const broadcast = params.broadcast;
      const from = own.find((n) => ipv4InSubnet(broadcast, n.address, n.prefix)) ?? own[0];
      return [{ interface: params.interface, broadcast, bindAddress: from?.address ?? null }];
    }
    return own.map((n) => ({
      interface: n.name,
      broadcast: ipv4Broadcast(n.address, n.prefix),
      bindAddress: n.address,
    }));
  }
  if (params.broadcast !== undefined) {
    const broadcast = params.broadcast;
    const from = networks.find((n) => n.prefix < 31 && ipv4InSubnet(broadcast, n.address, n.prefix));
    return [{ interface: from?.name ?? null, broadcast, bindAddress: from?.address ?? null }];
  }
  const all = networks
    .filter((n) => n.prefix < 31)
    .map((n) => ({ interface: n.name, broadcast: ipv4Broadcast(n.address, n.prefix), bindAddress: n.address }));
  if (all.length === 0) {
    throw new LetKiteError('not_found', 'this machine has no IPv4 network to send a Wake-on-LAN packet on');
  }
  return all;
}

/** A refusal of the system, by its errno: no permission → unsupported here; no such address or route → not_found. */
function sendError(err: unknown, target: WakeTarget): LetKiteError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const where = `${target.broadcast}:${WAKE_PORT}${target.interface ? ` on ${target.interface}` : ''}`;
  if (code === 'EACCES' || code === 'EPERM') {
    return new LetKiteError('unsupported', `this machine does not allow broadcasts to ${where} (${code})`, { code });
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENETUNREACH' || code === 'EHOSTUNREACH' || code === 'ENODEV') {
    return new LetKiteError('not_found', `no route to ${where} (${code})`, { code });
  }
  return new LetKiteError('internal', `sending the magic packet to ${where} failed: ${(err as Error).message}`);
}

/** One UDP datagram with SO_BROADCAST, from `bindAddress` when given (that picks the interface). */
export function sendBroadcast(packet: Uint8Array, target: WakeTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createSocket({ type: 'udp4' });
    const fail = (err: unknown) => {
      socket.close();
      reject(sendError(err, target));
    };
    socket.once('error', fail);
    socket.bind({ port: 0, ...(target.bindAddress ? { address: target.bindAddress } : {}), exclusive: true }, () => {
      try {
        socket.setBroadcast(true);
      } catch (err) {
        fail(err);
        return;
      }
      socket.send(packet, WAKE_PORT, target.broadcast, (err) => {
        if (err) {
          fail(err);
          return;
        }
        socket.close();
        resolve();
      });
    });
  });
}
