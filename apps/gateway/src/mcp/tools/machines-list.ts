import { MACHINES_LIST_DEFAULT_LIMIT, machinesList } from '@letkite/protocol';
import { machineReachOf } from '../../machines/resolve-machine';
import { defineHandler } from '../tool-handler';

export const machinesListHandler = defineHandler(machinesList, async (input, ctx) => {
  // The store pages with the reach filter in its query (name, then id; the cursor is its own, store/machine-page.ts):
  // a page costs its rows, not the fleet's.
  const { machines: page, nextCursor } = await ctx.deps.store.pageReachableMachines(machineReachOf(ctx.principal), {
    cursor: input.cursor ?? null,
    limit: input.limit ?? MACHINES_LIST_DEFAULT_LIMIT,
  });
  // Presence for this page only.
  const online = await ctx.deps.hub.online(page.map((m) => m.id));
  return {
    machines: page.map((m) => ({
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
    next_cursor: nextCursor,
  };
});
