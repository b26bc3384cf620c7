import { LetKiteError } from '@letkite/protocol';
import type { GatewayDeps } from '../deps';
import { seesEveryMachine } from '../identity/permissions';
import type { Grant, Machine } from '../store/types';

/** Who asks to reach machines: a principal (token, connection) or a signed-in person (no grant). */
export interface MachineSeeker {
  accountId: string;
  userId: string;
  role: string;
  grant?: Pick<Grant, 'machines'>;
}

/**
 * The machines someone can reach: their account's, minus machines claimed by groups they are not in (owners and
 * admins reach those too), narrowed by the grant's machine list.
 */
export async function reachableMachines(
  deps: Pick<GatewayDeps, 'store' | 'identity'>,
  principal: MachineSeeker,
): Promise<Machine[]> {
  const all = await deps.store.listMachines(principal.accountId);
  let reachable = all;
  if (!seesEveryMachine(principal.role)) {
    const claims = await deps.identity.machineClaims(principal.accountId);
    const mine = new Set(await deps.identity.groupsOfUser(principal.accountId, principal.userId));
    reachable = all.filter((m) => claims.get(m.id)?.some((g) => mine.has(g)) ?? true);
  }
  const allowed = principal.grant?.machines ?? '*';
  return allowed === '*' ? reachable : reachable.filter((m) => allowed.includes(m.id));
}

/**
 * Finds a machine by id or unique name among those the principal can reach. A machine outside the grant is
 * `machine_not_found`, exactly like one that does not exist.
 */
export async function resolveMachine(
  deps: Pick<GatewayDeps, 'store' | 'identity'>,
  principal: MachineSeeker,
  ref: string,
): Promise<Machine> {
  const machines = await reachableMachines(deps, principal);
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
