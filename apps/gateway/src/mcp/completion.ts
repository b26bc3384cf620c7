import type { Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import { reachableMachines } from '../machines/resolve-machine';
import { knownHandles } from './resources/handles';
import { templateKind } from './resources/resource-uris';

/** Tool and prompt arguments that take a machine (by name or id). */
export const MACHINE_ARGUMENTS = new Set(['machine', 'via_machine', 'machines']);
/** MCP caps a completion at 100 values. */
const MAX_VALUES = 100;

type CompleteRequest = {
  ref: { type: string; name?: string; uri?: string };
  argument: { name: string; value: string };
};

function matching(values: Iterable<string>, prefix: string) {
  const p = prefix.toLowerCase();
  const all = [...new Set(values)].filter((v) => v.toLowerCase().startsWith(p)).sort();
  return { values: all.slice(0, MAX_VALUES), total: all.length, hasMore: all.length > MAX_VALUES };
}

/**
 * `completion/complete`: machine names (and ids) for an argument that takes a machine, and for the `{id}` of the
 * machine template; for the terminal and job templates, the ids this connection made. Only what the grant reaches
 * is offered (an unreachable machine's name is never suggested); anything else completes to nothing.
 */
export async function complete(
  deps: GatewayDeps,
  principal: Principal,
  request: CompleteRequest,
): Promise<{ completion: { values: string[]; total: number; hasMore: boolean } }> {
  const { ref, argument } = request;
  const value = argument.value ?? '';
  const kind = ref.type === 'ref/resource' && ref.uri ? templateKind(ref.uri) : null;
  if (kind === 'machine' || (ref.type !== 'ref/resource' && MACHINE_ARGUMENTS.has(argument.name))) {
    const machines = await reachableMachines(deps, principal);
    // Names first: they are what people type; ids complete too (a name may be ambiguous).
    const names = matching(
      machines.map((m) => m.name),
      value,
    );
    const ids = matching(
      machines.map((m) => m.id),
      value,
    );
    const values = [...names.values, ...ids.values.filter((v) => !names.values.includes(v))];
    return {
      completion: {
        values: values.slice(0, MAX_VALUES),
        total: names.total + ids.total,
        hasMore: values.length > MAX_VALUES,
      },
    };
  }
  if (kind !== null && argument.name === 'id') {
    const handles = await knownHandles(deps, principal, kind === 'job_output' ? 'job' : 'terminal');
    const reachable = new Set((await reachableMachines(deps, principal)).map((m) => m.id));
    return {
      completion: matching(
        handles.filter((h) => reachable.has(h.machineId)).map((h) => h.id),
        value,
      ),
    };
  }
  return { completion: { values: [], total: 0, hasMore: false } };
}
