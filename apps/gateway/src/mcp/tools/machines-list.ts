import { machinesList } from '@letkite/protocol';
import { reachableMachines } from '../../machines/resolve-machine';
import { defineHandler } from '../tool-handler';

export const machinesListHandler = defineHandler(machinesList, async (_input, ctx) => {
  const machines = await reachableMachines(ctx.deps, ctx.principal);
  const online = await ctx.deps.hub.online(machines.map((m) => m.id));
  return {
    machines: machines.map((m) => ({
      id: m.id,
      name: m.name,
      online: online.has(m.id),
      os: m.os,
      arch: m.arch,
      hostname: m.hostname,
      labels: m.labels,
      ceiling: m.ceilingSource === 'error' ? { error: m.ceilingError } : (m.ceiling ?? null),
      last_seen_at: m.lastSeenAt,
    })),
  };
});
