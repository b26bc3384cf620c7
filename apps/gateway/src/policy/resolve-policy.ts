import { Ceiling, type ClampedPolicy, clampToCeiling, effectivePermissions } from '@letkite/ceiling';
import { type BuiltinPolicyName, builtinPolicies, builtinPolicyNames, type Policy, parsePolicy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import type { PolicyStore, StoredPolicy } from '../store/policy-store';
import type { Grant, Machine } from '../store/types';

/** Which stored revision a resolved policy is: what an approval binds to besides the policy's content. */
export interface PolicyRevisionRef {
  name: string;
  /** The stored revision; null for a built-in or an inline policy (their content is their version). */
  version: number | null;
}

const revisions = new WeakMap<Policy, PolicyRevisionRef>();

/** The stored revision a policy object was resolved from (see `resolveGrantPolicy`), or undefined. */
export function revisionOf(policy: Policy): PolicyRevisionRef | undefined {
  return revisions.get(policy);
}

/** Whether a name is one of the built-ins every account has (they cannot be stored, edited or deleted). */
export function isBuiltinPolicyName(name: string): name is BuiltinPolicyName {
  return (builtinPolicyNames as readonly string[]).includes(name);
}

/**
 * The policy a grant names, read fresh on every call so that an edit applies to the next call of every
 * connection that uses it: a built-in by name, a stored account policy by name (its current revision), or an
 * inline policy object (API tokens made from a TOML file before account policies existed). An unknown name —
 * a deleted policy — fails closed with `blocked_by_policy`.
 */
export async function resolveGrantPolicy(
  policies: Pick<PolicyStore, 'get'>,
  accountId: string,
  grant: Grant,
): Promise<Policy> {
  return policyOfSource(await grantPolicySource(policies, accountId, grant));
}

/** What a grant's policy is made from, read fresh: a built-in, the stored policy's current revision, or inline. */
export type GrantPolicySource =
  | { kind: 'builtin'; name: BuiltinPolicyName }
  | { kind: 'stored'; stored: StoredPolicy }
  | { kind: 'inline'; value: unknown };

/** The first half of `resolveGrantPolicy`: the store read, without the parse (a deleted policy fails closed). */
export async function grantPolicySource(
  policies: Pick<PolicyStore, 'get'>,
  accountId: string,
  grant: Grant,
): Promise<GrantPolicySource> {
  if (typeof grant.policy !== 'string') return { kind: 'inline', value: grant.policy };
  if (isBuiltinPolicyName(grant.policy)) return { kind: 'builtin', name: grant.policy };
  const stored = await policies.get(accountId, grant.policy);
  if (!stored) {
    throw new LetKiteError('blocked_by_policy', `unknown policy "${grant.policy}"`, {
      layer: 'policy',
      policy: grant.policy,
    });
  }
  return { kind: 'stored', stored };
}

/** The second half of `resolveGrantPolicy`: the policy object, marked with its stored revision. */
export function policyOfSource(source: GrantPolicySource): Policy {
  switch (source.kind) {
    case 'inline':
      return parsePolicy(source.value);
    case 'builtin':
      return builtinPolicies[source.name];
    case 'stored': {
      const policy = parsePolicy(source.stored.parsed);
      revisions.set(policy, { name: source.stored.name, version: source.stored.version });
      return policy;
    }
  }
}

/**
 * The ceiling a machine last reported. The gateway checks against it to refuse early and to explain refusals;
 * the agent enforces the real one whatever this says. A machine that has not reported yet is checked against the
 * policy alone (the agent still has the last word).
 */
export function reportedCeiling(machine: Machine): Ceiling | null {
  if (machine.ceilingSource === 'error') {
    throw new LetKiteError(
      'blocked_by_ceiling',
      `machine "${machine.name}" refuses everything: ${machine.ceilingError ?? 'its ceiling is invalid'}`,
      {
        layer: 'ceiling',
        error: machine.ceilingError,
      },
    );
  }
  if (machine.ceiling === null) return null;
  const parsed = Ceiling.safeParse(machine.ceiling);
  return parsed.success ? parsed.data : null;
}

/** A ceiling that bounds nothing: how a policy looks before any machine has had its say. */
const OPEN_CEILING: Ceiling = Ceiling.parse({
  version: 1,
  shell: 'full',
  files: [{ path: '*', access: 'rw' }],
  deny: [],
  gui: 'act',
  terminals: true,
  transfers: true,
  wake: true,
  run_as: 'root',
});

export function clampForMachine(policy: Policy, machine: Machine): ClampedPolicy {
  return clampToCeiling(policy, reportedCeiling(machine) ?? OPEN_CEILING);
}

/**
 * Tool names a policy can ever use within a grant's scopes (before any machine's ceiling): the rest are not even
 * listed.
 */
export function toolsAllowedByPolicy(policy: Policy, scopes: Grant['scopes']): string[] {
  return effectivePermissions({
    role: { tools: '*', machines: '*' },
    connection: { tools: scopes, machines: '*' },
    machine: '*',
    policy,
    // Unbounded for tunnels too: the policy's own targets (an intersection with any fixed list would drop names).
    ceiling: { ...OPEN_CEILING, tunnel_targets: [...policy.tunnel_targets] },
    home: '/root',
  }).tools;
}
