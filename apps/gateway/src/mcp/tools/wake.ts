import {
  type AgentOpParams,
  ipv4Broadcast,
  ipv4InSubnet,
  LetKiteError,
  type NetworkReport,
  wakeDevice,
  wakeNode,
} from '@letkite/protocol';
import { policyToolReason, requireApproval } from '../../approvals/gate';
import { type MachineCall, prepareMachineCall } from '../../machines/prepare-machine-call';
import { reachableMachines, resolveMachine } from '../../machines/resolve-machine';
import { reportedCeiling } from '../../policy/resolve-policy';
import type { Machine } from '../../store/types';
import type { MachineNetworkStore } from '../../wake/machine-network-store';
import { defineHandler, type ToolCallContext } from '../tool-handler';

/** One way to wake a machine: the awake machine that sends, out of which interface, to which broadcast, which MAC. */
export interface WakeRoute {
  via: Machine;
  interface: string;
  broadcast: string;
  mac: string;
}

function networksOf(ctx: ToolCallContext): MachineNetworkStore {
  const store = ctx.deps.machineNetworks;
  if (!store) throw new LetKiteError('unsupported', "this gateway does not keep machines' networks (Wake-on-LAN)");
  return store;
}

/**
 * The routes from awake machines to a sleeping one: an interface of the sender on the same IPv4 subnet (same
 * network and prefix) as an interface of the sleeper, in the order of `candidates`.
 */
export function wakeRoutes(
  sleeper: NetworkReport,
  candidates: readonly { machine: Machine; network: NetworkReport }[],
): WakeRoute[] {
  const routes: WakeRoute[] = [];
  for (const { machine, network } of candidates) {
    for (const own of network) {
      for (const address of own.ipv4) {
        if (address.prefix >= 31) continue; // point-to-point links have no broadcast
        const peer = sleeper.find((i) =>
          i.ipv4.some((t) => t.prefix === address.prefix && ipv4InSubnet(t.address, address.address, address.prefix)),
        );
        if (peer) {
          routes.push({
            via: machine,
            interface: own.name,
            broadcast: ipv4Broadcast(address.address, address.prefix),
            mac: peer.mac,
          });
        }
      }
    }
  }
  return routes;
}

/** Whether a machine's reported ceiling lets it send (an unreported ceiling: the agent decides). */
function ceilingAllowsWake(machine: Machine): boolean {
  try {
    const ceiling = reportedCeiling(machine);
    return ceiling === null || ceiling.wake;
  } catch {
    return false; // an invalid ceiling refuses everything
  }
}

/** The gateway's early refusal for the sending machine (its agent checks its real ceiling again). */
function refuseWithoutWake(m: MachineCall): void {
  if (!ceilingAllowsWake(m.machine)) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      `machine "${m.machine.name}" does not allow Wake-on-LAN (wake = false in its ceiling)`,
      { layer: 'ceiling', key: 'wake', machine: m.machine.id },
    );
  }
}

/** The approval (when the policy lists the tool under approval.tools), then the send on the agent. */
async function send(
  ctx: ToolCallContext,
  m: MachineCall,
  bound: { tool: 'wake_node' | 'wake_device'; machine: Machine; args: Record<string, unknown> },
  params: AgentOpParams<'wake_send'>,
) {
  const needsHuman = policyToolReason(m.policy, bound.tool);
  ctx.audit.decision = needsHuman ? 'approve' : 'allow';
  const approved = needsHuman
    ? (
        await requireApproval(ctx, {
          tool: bound.tool,
          machine: bound.machine,
          policy: m.policy,
          args: bound.args,
          reason: needsHuman,
          agent: { op: 'wake_send', params, machines: [m.machine] },
        })
      ).approved
    : false;
  return m.call('wake_send', params, { approved });
}

/**
 * `wake_node`: the sleeping machine's last reported interfaces name its MAC and subnets; the first online machine
 * the caller may reach that shares a subnet (and whose reported ceiling allows wake) sends the packet to that
 * subnet's broadcast address out of the matching interface.
 */
export const wakeNodeHandler = defineHandler(wakeNode, async (input, ctx) => {
  const networks = networksOf(ctx);
  const target = await resolveMachine(ctx.deps, ctx.principal, input.machine);
  ctx.audit.target = target.id;
  ctx.audit.machineIds = [target.id];
  if ((await ctx.deps.hub.online([target.id])).has(target.id)) {
    throw new LetKiteError('conflict', `machine "${target.name}" is online: it is awake already`, {
      machine: target.id,
    });
  }
  const report = await networks.get(target.id);
  if (!report || report.network.every((i) => i.ipv4.length === 0)) {
    throw new LetKiteError(
      'not_found',
      `machine "${target.name}" never reported its network interfaces (MAC and subnets): it needs to have been online once with an agent that reports them`,
      { machine: target.id, reason: 'no_network_reported' },
    );
  }
  const others = (await reachableMachines(ctx.deps, ctx.principal))
    .filter((m) => m.id !== target.id)
    .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  const online = await ctx.deps.hub.online(others.map((m) => m.id));
  const reports = new Map((await networks.forAccount(ctx.principal.accountId)).map((r) => [r.machineId, r.network]));
  const routes = wakeRoutes(
    report.network,
    others.filter((m) => online.has(m.id)).map((m) => ({ machine: m, network: reports.get(m.id) ?? [] })),
  );
  const subnets = report.network.flatMap((i) => i.ipv4.map((a) => `${a.address}/${a.prefix}`));
  if (routes.length === 0) {
    throw new LetKiteError(
      'machine_offline',
      `no online machine you can reach shares a network with "${target.name}" (${subnets.join(', ')}), so none can wake it`,
      { machine: target.id, reason: 'no_agent_on_network', subnets },
    );
  }
  const route = routes.find((r) => ceilingAllowsWake(r.via));
  if (!route) {
    const vias = [...new Set(routes.map((r) => r.via.name))];
    throw new LetKiteError(
      'blocked_by_ceiling',
      `the machines on "${target.name}"'s network (${vias.join(', ')}) do not allow Wake-on-LAN (wake = false in their ceilings)`,
      { layer: 'ceiling', key: 'wake', machines: [...new Set(routes.map((r) => r.via.id))] },
    );
  }
  const m = await prepareMachineCall(ctx, route.via.id, { quiet: true });
  refuseWithoutWake(m);
  ctx.audit.details = { via_machine: m.machine.id, mac: route.mac, broadcast: route.broadcast };
  const params = { tool: 'wake_node' as const, mac: route.mac, broadcast: route.broadcast, interface: route.interface };
  const result = await send(ctx, m, { tool: 'wake_node', machine: target, args: input }, params);
  return { machine: target.id, via_machine: m.machine.id, mac: result.mac, sent: result.sent };
});

/** `wake_device`: a magic packet for any MAC, sent by the named machine (its ceiling must allow wake). */
export const wakeDeviceHandler = defineHandler(wakeDevice, async (input, ctx) => {
  const m = await prepareMachineCall(ctx, input.via_machine);
  refuseWithoutWake(m);
  ctx.audit.details = { mac: input.mac, ...(input.broadcast ? { broadcast: input.broadcast } : {}) };
  const params = {
    tool: 'wake_device' as const,
    mac: input.mac,
    ...(input.broadcast !== undefined ? { broadcast: input.broadcast } : {}),
  };
  const result = await send(ctx, m, { tool: 'wake_device', machine: m.machine, args: input }, params);
  return { via_machine: m.machine.id, mac: result.mac, sent: result.sent };
});
