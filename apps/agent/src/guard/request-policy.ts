import { type Ceiling, type ClampedPolicy, clampToCeiling } from '@letkite/ceiling';
import { builtinPolicies, type Policy, parsePolicy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import type { CeilingState } from '../ceiling/ceiling-source';
import { hasGlobCharacters, isProcessEntry, reachableBy } from './protected-paths';

/** The policy a request carries (a built-in name or a full policy object), clamped to this machine's ceiling. */
export interface RequestPolicy {
  policy: Policy;
  ceiling: Ceiling;
  clamped: ClampedPolicy;
  /** The agent's own files (already in `clamped.deny`): the file tools refuse them by name. */
  protectedPaths: readonly string[];
}

export function policyFromContext(raw: unknown): Policy {
  if (typeof raw === 'string') {
    const builtin = builtinPolicies[raw as keyof typeof builtinPolicies];
    if (!builtin) throw new LetKiteError('blocked_by_policy', `unknown policy "${raw}"`, { layer: 'policy' });
    return builtin;
  }
  try {
    return parsePolicy(raw);
  } catch {
    // A policy the agent cannot understand grants nothing.
    throw new LetKiteError('blocked_by_policy', 'the request carries a policy this agent cannot parse', {
      layer: 'policy',
    });
  }
}

/**
 * Combines the request's policy with the ceiling in force. A ceiling that failed to load refuses everything
 * with its reason (fail closed).
 */
export function requestPolicy(rawPolicy: unknown, ceiling: CeilingState): RequestPolicy {
  if (ceiling.source === 'error') {
    throw new LetKiteError(
      'blocked_by_ceiling',
      `this machine's ceiling is invalid, so everything is refused: ${ceiling.error}`,
      {
        layer: 'ceiling',
        path: ceiling.path,
      },
    );
  }
  const policy = policyFromContext(rawPolicy);
  const clamped = clampToCeiling(policy, ceiling.ceiling);
  const protectedPaths = ceiling.protectedPaths ?? [];
  const unprotectable = protectedPaths.find(hasGlobCharacters);
  if (unprotectable !== undefined) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      `the agent cannot hide its own files at "${unprotectable}" (glob characters in the path), so everything is refused`,
      { layer: 'ceiling', key: 'protected' },
    );
  }
  // Whatever the ceiling says, the agent's own files are denied: the sandbox hides them, file tools refuse them.
  // Process entries (/proc/<pid> of the agent and its gateway) only concern the file tools: inside the sandbox
  // Landlock already refuses another domain's /proc/<pid>/{environ,root,fd,mem}, and /proc is not hidden by mounts.
  // Paths the run-as account cannot even reach (a 0700 state directory of root's) need no hiding either.
  const hidden = protectedPaths.filter((p) => !isProcessEntry(p) && reachableBy(p, clamped.run_as));
  return {
    policy,
    ceiling: ceiling.ceiling,
    clamped: { ...clamped, deny: [...clamped.deny, ...hidden] },
    protectedPaths,
  };
}
