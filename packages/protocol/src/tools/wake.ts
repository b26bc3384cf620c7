import { z } from 'zod';
import { defineTool } from '../define-tool';
import { Ipv4Address, MacAddress } from '../ops-wake';
import { gatedCallErrors, MachineRef, reachingMachineErrors } from './common';

/**
 * The power tools (DESIGN §7 power group, issue #15): Wake-on-LAN sent by an agent on the sleeping device's
 * network. Listed only where a machine's ceiling turns `wake` on; the sending machine's agent refuses when its
 * own ceiling says `wake = false`, whatever the gateway asked.
 */

const SentPacket = z.object({
  interface: z.string().nullable().describe('The interface the packet left by (null: the system chose).'),
  broadcast: z.string().describe('The IPv4 broadcast address it was sent to.'),
  port: z.number().int(),
});

export const wakeNodeInput = z.strictObject({
  machine: MachineRef.describe('The sleeping machine: id or unique name (see machines_list; it shows online: false).'),
});
export const wakeNodeOutput = z.object({
  machine: z.string().describe('The id of the machine being woken.'),
  via_machine: z.string().describe('The id of the online machine that sent the magic packet.'),
  mac: z.string(),
  sent: z.array(SentPacket),
});

export const wakeNode = defineTool({
  name: 'wake_node',
  title: 'Wake a machine',
  description:
    "Wakes an enrolled machine that is asleep or off (Wake-on-LAN): another online machine on the same network, whose ceiling allows wake, sends the magic packet to the sleeping machine's reported MAC address. The answer only says the packet was sent; the machine shows online in machines_list once its agent is back (often 10–60 s). Needs the sleeping machine to have been online once with this agent version (so its MAC and networks are known) and Wake-on-LAN enabled in its firmware.",
  input: wakeNodeInput,
  output: wakeNodeOutput,
  // It powers on hardware: not read-only, nothing lost (destructive false), each call sends again, reaches devices.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  gated: true,
  // machine_offline: no online machine on its network may send (details.reason "no_agent_on_network");
  // blocked_by_ceiling: every such machine's ceiling says wake = false; not_found: its MAC and networks were never
  // reported; conflict: the machine is online (awake) already; unsupported: the sending agent cannot send.
  errors: [...reachingMachineErrors, ...gatedCallErrors, 'not_found', 'conflict', 'unsupported'],
});

export const wakeDeviceInput = z.strictObject({
  via_machine: MachineRef.describe('The online machine that sends the packet: id or unique name.'),
  mac: MacAddress.describe('The MAC address of the device to wake ("52:54:00:12:34:56").'),
  broadcast: Ipv4Address.optional().describe(
    'IPv4 broadcast address of the device\'s network as seen from via_machine ("192.168.1.255"); default: every network of via_machine.',
  ),
});
export const wakeDeviceOutput = z.object({
  via_machine: z.string().describe('The id of the machine that sent the magic packet.'),
  mac: z.string(),
  sent: z.array(SentPacket),
});

export const wakeDevice = defineTool({
  name: 'wake_device',
  title: 'Wake a device',
  description:
    'Sends a Wake-on-LAN magic packet for any device (a NAS, a PC without an agent) from an online machine on its network, whose ceiling must allow wake. The answer only says the packet was sent, not that the device woke.',
  input: wakeDeviceInput,
  output: wakeDeviceOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  gated: true,
  // not_found: broadcast names no network of via_machine and interface routing failed; unsupported: the agent
  // is too old to send (or the platform refuses broadcasts).
  errors: [...reachingMachineErrors, ...gatedCallErrors, 'not_found', 'unsupported'],
});

/** The power tools, in the order DESIGN §7 lists them. */
export const wakeTools = [wakeNode, wakeDevice] as const;
