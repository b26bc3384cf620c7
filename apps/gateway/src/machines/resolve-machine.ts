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
  const reach = await reachTest(deps, principal);
  return all.filter(reach);
}

/** The test `reachableMachines` applies, for one machine of the principal's account at a time. */
async function reachTest(
  deps: Pick<GatewayDeps, 'identity'>,
  principal: MachineSeeker,
): Promise<(m: Pick<Machine, 'id'>) => boolean> {
  let byGroups: (m: Pick<Machine, 'id'>) => boolean = () => true;
  if (!seesEveryMachine(principal.role)) {
    const claims = await deps.identity.machineClaims(principal.accountId);
    const mine = new Set(await deps.identity.groupsOfUser(principal.accountId, principal.userId));
    byGroups = (m) => claims.get(m.id)?.some((g) => mine.has(g)) ?? true;
  }
  const allowed = principal.grant?.machines ?? '*';
  return allowed === '*' ? byGroups : (m) => byGroups(m) && allowed.includes(m.id);
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
  // By id (what clients pass after machines_list): one row, not the whole fleet, on every call. The same test as
  // the list; anything else (a name, an id out of reach) takes the list below, which answers as it always did.
  const one = await deps.store.getMachine(ref);
  if (one !== null && one.accountId === principal.accountId && (await reachTest(deps, principal))(one)) return one;
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
