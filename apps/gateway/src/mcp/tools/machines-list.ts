import { machinesList } from '@letkite/protocol';
import { reachableMachines } from '../../machines/resolve-machine';
import { defineHandler } from '../tool-handler';

export const machinesListHandler = defineHandler(machinesList, async (_input, ctx) => {
  const machines = await reachableMachines(ctx.deps, ctx.principal);
  return {
    machines: machines.map((m) => ({
      id: m.id,
      name: m.name,
      online: ctx.deps.hub.isOnline(m.id),
      os: m.os,
      arch: m.arch,
      hostname: m.hostname,
      labels: m.labels,
      ceiling: m.ceilingSource === 'error' ? { error: m.ceilingError } : (m.ceiling ?? null),
      last_seen_at: m.lastSeenAt,
    })),
  };
});
