import { z } from 'zod';
import { agentOp } from './agent-op';
import { Ipv4Address, MacAddress, normalizeMac } from './network-report';

/**
 * Wake-on-LAN (DESIGN §7 power group, issue #15). An agent reports its network interfaces (MAC and IPv4 subnets)
 * on every connect, so the gateway knows which awake machine shares a network with a sleeping one; `wake_send`
 * asks an agent to send the magic packet: UDP to port 9 of a broadcast address, 6 × 0xFF then the MAC 16 times.
 * Pure: no I/O here (the agent's ops/wake-send.ts sends).
 */

/** The discard port magic packets traditionally go to (the NIC matches the payload, whatever the port). */
export const WAKE_PORT = 9;
/** 6 bytes of 0xFF and 16 copies of the 6-byte MAC. */
export const MAGIC_PACKET_BYTES = 6 + 16 * 6;

export {
  Ipv4Address,
  MacAddress,
  NetworkInterfaceReport,
  NetworkReport,
  normalizeMac,
} from './network-report';

export const wakeToolNames = ['wake_node', 'wake_device'] as const;

export const WakeSendParams = z.strictObject({
  /**
   * The tool this send serves: the agent checks the policy's `approval.tools` for it (and the approval proof binds
   * it with the rest of the params).
   */
  tool: z.enum(wakeToolNames),
  mac: MacAddress,
  /** Where to send; default: the broadcast address of every IPv4 network of the machine. */
  broadcast: Ipv4Address.optional(),
  /** Send out of this interface (the agent binds to its address); default: the one whose subnet holds `broadcast`. */
  interface: z.string().min(1).max(64).optional(),
});
export type WakeSendParams = z.infer<typeof WakeSendParams>;

export const WakeSendResult = z.object({
  mac: z.string(),
  /** One entry per packet sent. */
  sent: z.array(z.object({ interface: z.string().nullable(), broadcast: z.string(), port: z.number().int() })),
  bytes: z.number().int(),
});
export type WakeSendResult = z.infer<typeof WakeSendResult>;

/** The magic packet for a MAC (any accepted spelling). */
export function magicPacket(mac: string): Uint8Array {
  const hex = normalizeMac(mac).replace(/:/g, '');
  if (!/^[0-9a-f]{12}$/.test(hex)) throw new Error(`not a MAC address: "${mac}"`);
  const bytes = new Uint8Array(MAGIC_PACKET_BYTES).fill(0xff, 0, 6);
  for (let i = 0; i < 16; i++) {
    for (let b = 0; b < 6; b++) bytes[6 + i * 6 + b] = Number.parseInt(hex.slice(b * 2, b * 2 + 2), 16);
  }
  return bytes;
}

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** The network address of `address/prefix` ("10.1.2.0" for 10.1.2.3/24). */
export function ipv4Network(address: string, prefix: number): string {
  const n = ipv4ToInt(address);
  return intToIpv4(n - (n % 2 ** (32 - prefix)));
}

/** The directed broadcast address of `address/prefix` ("10.1.2.255" for 10.1.2.3/24; the address itself for /32). */
export function ipv4Broadcast(address: string, prefix: number): string {
  const n = ipv4ToInt(address);
  const size = 2 ** (32 - prefix);
  return intToIpv4(n - (n % size) + size - 1);
}

/** Whether `address` lies in the network `network/prefix`. */
export function ipv4InSubnet(address: string, network: string, prefix: number): boolean {
  return ipv4Network(address, prefix) === ipv4Network(network, prefix);
}

/** This module's agent operations (agent-ops.ts joins every module's into `agentOps`). */
export const wakeOps = {
  wake_send: agentOp(WakeSendParams, WakeSendResult, 'call'),
} as const;
