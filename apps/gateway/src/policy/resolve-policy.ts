import { Ceiling, type ClampedPolicy, clampToCeiling, effectivePermissions } from '@letkite/ceiling';
import { builtinPolicies, type Policy, parsePolicy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import type { Grant, Machine } from '../store/types';

/** The policy a grant names: a built-in by name, or an inline policy object. */
export function resolveGrantPolicy(grant: Grant): Policy {
  if (typeof grant.policy === 'string') {
    const builtin = builtinPolicies[grant.policy as keyof typeof builtinPolicies];
    if (!builtin) throw new LetKiteError('blocked_by_policy', `unknown policy "${grant.policy}"`, { layer: 'policy' });
    return builtin;
  }
  return parsePolicy(grant.policy);
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

/** Tool names a grant's policy can ever use (before any machine's ceiling): the rest are not even listed. */
export function toolsAllowedByPolicy(grant: Grant): string[] {
  const policy = resolveGrantPolicy(grant);
  return effectivePermissions({
    role: { tools: '*', machines: '*' },
    connection: { tools: grant.scopes, machines: '*' },
    machine: '*',
    policy,
    ceiling: OPEN_CEILING,
    home: '/root',
  }).tools;
}
