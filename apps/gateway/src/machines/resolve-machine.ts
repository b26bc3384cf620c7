import { LetKiteError } from '@letkite/protocol';
import type { Principal } from '../auth/principal';
import type { Machine, Store } from '../store/types';

/** The machines a principal can reach: its account's, narrowed by the grant's machine list. */
export async function reachableMachines(store: Store, principal: Principal): Promise<Machine[]> {
  const all = await store.listMachines(principal.accountId);
  const allowed = principal.grant.machines;
  return allowed === '*' ? all : all.filter((m) => allowed.includes(m.id));
}

/**
 * Finds a machine by id or unique name among those the principal can reach. A machine outside the grant is
 * `machine_not_found`, exactly like one that does not exist.
 */
export async function resolveMachine(store: Store, principal: Principal, ref: string): Promise<Machine> {
  const machines = await reachableMachines(store, principal);
  const byId = machines.find((m) => m.id === ref);
  if (byId) return byId;
  const byName = machines.filter((m) => m.name === ref);
  if (byName.length === 1 && byName[0]) return byName[0];
  if (byName.length > 1) {
    throw new LetKiteError('ambiguous_machine', `the name "${ref}" matches ${byName.length} machines; use an id`, {
      ids: byName.map((m) => m.id),
    });
  }
  throw new LetKiteError('machine_not_found', `no machine "${ref}"`);
}
