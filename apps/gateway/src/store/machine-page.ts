import { LetKiteError, MACHINES_LIST_MAX_LIMIT } from '@letkite/protocol';
import type { Machine } from './types';

/**
 * The cursor of a page of machines (`Store.pageReachableMachines`, machines_list's `next_cursor`): the (name, id)
 * of the page's last machine, opaque to the client. Both dialects make and read it here, so a cursor one gateway
 * handed out pages on any other. It grants nothing: the page after it is filtered by what the caller reaches like
 * the first.
 */
export type MachinePosition = Pick<Machine, 'name' | 'id'>;

export function encodeMachinesCursor(m: MachinePosition): string {
  return Buffer.from(JSON.stringify([m.name, m.id])).toString('base64url');
}

/** `invalid_params` for anything `encodeMachinesCursor` did not make (machines_list's answer since it paged). */
export function decodeMachinesCursor(cursor: string): MachinePosition {
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

/**
 * Where a page starts: after the cursor's machine, or before every machine. ('', '') sorts before every row
 * (ids are never empty), so the first page is the same index range query as the others.
 */
export function pageStart(cursor: string | null): MachinePosition {
  return cursor === null ? { name: '', id: '' } : decodeMachinesCursor(cursor);
}

/** The page out of `limit + 1` rows read: the extra row only says that more follow. */
export function pageOf(rows: Machine[], limit: number): { machines: Machine[]; nextCursor: string | null } {
  const machines = rows.slice(0, limit);
  const last = machines.at(-1);
  return { machines, nextCursor: rows.length > limit && last ? encodeMachinesCursor(last) : null };
}

/** A page holds 1 to `MACHINES_LIST_MAX_LIMIT` machines; anything else is `invalid_params`, before any query. */
export function checkPageLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MACHINES_LIST_MAX_LIMIT) {
    throw new LetKiteError(
      'invalid_params',
      `limit ${limit} is not a whole number from 1 to ${MACHINES_LIST_MAX_LIMIT}`,
    );
  }
}
