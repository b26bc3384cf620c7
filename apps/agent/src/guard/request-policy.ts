import { type Ceiling, type ClampedPolicy, clampToCeiling } from '@letkite/ceiling';
import { builtinPolicies, type Policy, parsePolicy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import type { CeilingState } from '../ceiling/ceiling-source';

/** The policy a request carries (a built-in name or a full policy object), clamped to this machine's ceiling. */
export interface RequestPolicy {
  policy: Policy;
  ceiling: Ceiling;
  clamped: ClampedPolicy;
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
  return { policy, ceiling: ceiling.ceiling, clamped: clampToCeiling(policy, ceiling.ceiling) };
}
