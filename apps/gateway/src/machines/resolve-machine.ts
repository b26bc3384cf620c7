import { LetKiteError } from '@letkite/protocol';
import type { GatewayDeps } from '../deps';
import { seesEveryMachine } from '../identity/permissions';
import type { Grant, Machine, MachineReach } from '../store/types';

/** Who asks to reach machines: a principal (token, connection) or a signed-in person (no grant). */
export interface MachineSeeker {
  accountId: string;
  userId: string;
  role: string;
  grant?: Pick<Grant, 'machines'>;
}

/**
 * What a seeker reaches, as the store filters it: their account's machines, minus machines claimed by groups they
 * are not in (owners and admins reach those too), narrowed by the grant's machine list.
 */
export function machineReachOf(seeker: MachineSeeker): MachineReach {
  return {
    accountId: seeker.accountId,
    userId: seeker.userId,
    seesClaimedMachines: seesEveryMachine(seeker.role),
    machineIds: seeker.grant?.machines ?? '*',
  };
}

/** Every machine someone can reach (see `machineReachOf`), by name. */
export async function reachableMachines(deps: Pick<GatewayDeps, 'store'>, seeker: MachineSeeker): Promise<Machine[]> {
  return deps.store.listReachableMachines(machineReachOf(seeker));
}

/**
 * Finds a machine by id or unique name among those the seeker can reach, reading only the machines that match
 * (not the fleet). An id wins over a name. A machine outside the grant is `machine_not_found`, exactly like one
 * that does not exist.
 */
export async function resolveMachine(
  deps: Pick<GatewayDeps, 'store'>,
  seeker: MachineSeeker,
  ref: string,
): Promise<Machine> {
  const matches = await deps.store.findReachableMachines(machineReachOf(seeker), ref);
  const byId = matches.find((m) => m.id === ref);
  if (byId) return byId;
  const byName = matches.filter((m) => m.name === ref);
  if (byName.length === 1 && byName[0]) return byName[0];
  if (byName.length > 1) {
    throw new LetKiteError('ambiguous_machine', `the name "${ref}" matches ${byName.length} machines; use an id`, {
      ids: byName.map((m) => m.id),
    });
  }
  throw new LetKiteError('machine_not_found', `no machine "${ref}"`);
}
