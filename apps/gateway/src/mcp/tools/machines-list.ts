import { LetKiteError, MACHINES_LIST_DEFAULT_LIMIT, machinesList } from '@letkite/protocol';
import { reachableMachines } from '../../machines/resolve-machine';
import type { Machine } from '../../store/types';
import { defineHandler } from '../tool-handler';

/** Name, then id (names need not be unique): a total order, so a cursor names one place in it. */
function before(a: Pick<Machine, 'name' | 'id'>, b: Pick<Machine, 'name' | 'id'>): boolean {
  return a.name < b.name || (a.name === b.name && a.id < b.id);
}

/**
 * The cursor is the (name, id) of the last machine of a page, opaque to the client. It is a position, not a
 * snapshot: a machine added, renamed or removed between pages shows up (or not) where its name puts it, and no
 * machine is listed twice or skipped for another one's sake. It grants nothing: the page after it is filtered by
 * what the caller reaches like the first.
 */
export function encodeMachinesCursor(m: Pick<Machine, 'name' | 'id'>): string {
  return Buffer.from(JSON.stringify([m.name, m.id])).toString('base64url');
}

export function decodeMachinesCursor(cursor: string): Pick<Machine, 'name' | 'id'> {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') {
      return { name: v[0], id: v[1] };
    }
  } catch {
    // Falls through to the one answer for a cursor this gateway did not make.
  }
  throw new LetKiteError('invalid_params', 'cursor is not a next_cursor machines_list returned');
}

export const machinesListHandler = defineHandler(machinesList, async (input, ctx) => {
  const limit = input.limit ?? MACHINES_LIST_DEFAULT_LIMIT;
  const after = input.cursor === undefined ? null : decodeMachinesCursor(input.cursor);
  const reachable = await reachableMachines(ctx.deps, ctx.principal);
  // The store orders by name already; sorting here again (cheap next to the rows) keeps the cursor's order this
  // function's own, whatever collation a store uses.
  const sorted = [...reachable].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  let start = 0;
  if (after !== null) {
    // Binary search for the first machine after the cursor.
    let hi = sorted.length;
    while (start < hi) {
      const mid = (start + hi) >>> 1;
      if (before(after, sorted[mid] as Machine)) hi = mid;
      else start = mid + 1;
    }
  }
  const page = sorted.slice(start, start + limit);
  const last = page.at(-1);
  const more = start + limit < sorted.length;
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
    next_cursor: more && last ? encodeMachinesCursor(last) : null,
  };
});
