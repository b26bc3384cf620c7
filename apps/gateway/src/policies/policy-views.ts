import { builtinPolicies, builtinPolicyNames, type ConfigIssue, type Policy, parsePolicy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import type { PolicyRevisionView, PolicyView } from '@letkite/protocol/api';
import type { GatewayDeps } from '../deps';
import { toolGroupNames, toolGroups } from '../oauth/scopes';
import { isBuiltinPolicyName, toolsAllowedByPolicy } from '../policy/resolve-policy';
import type { PolicyRevision, StoredPolicy } from '../store/policy-store';

/** What the policy operations need from the gateway. */
export type PolicyDeps = Pick<GatewayDeps, 'store' | 'policies' | 'now'>;

/** The tool groups (OAuth scopes) a policy can ever use: what the consent page and token form offer with it. */
export function toolGroupsOf(policy: Policy): string[] {
  const tools = new Set(toolsAllowedByPolicy(policy, '*'));
  return toolGroupNames.filter((g) => (toolGroups[g] as readonly string[]).some((t) => tools.has(t)));
}

/**
 * A built-in as the API shows it: version 0, no author, and a TOML source written from its parsed form so the
 * editor can start a new policy from it.
 */
export function builtinView(name: (typeof builtinPolicyNames)[number]): PolicyView {
  const policy = builtinPolicies[name];
  return {
    name,
    version: 0,
    source: builtinSource(policy),
    parsed: policy as unknown as Record<string, unknown>,
    author: null,
    at: null,
    builtin: true,
    tool_groups: toolGroupsOf(policy),
  };
}

/** Every built-in, in their fixed order. */
export function builtinViews(): PolicyView[] {
  return builtinPolicyNames.map(builtinView);
}

export function revisionView(r: PolicyRevision): PolicyRevisionView {
  return { name: r.name, version: r.version, source: r.source, parsed: r.parsed, author: r.author, at: r.at };
}

export function storedView(p: StoredPolicy): PolicyView {
  return { ...revisionView(p), builtin: false, tool_groups: toolGroupsOf(parsePolicy(p.parsed)) };
}

/** A stored policy by name, or `not_found`; a built-in name is answered by the caller. */
export async function storedOrNotFound(deps: PolicyDeps, accountId: string, name: string): Promise<StoredPolicy> {
  const stored = await deps.policies.get(accountId, name);
  if (!stored) throw new LetKiteError('not_found', `no policy "${name}"`, { policy: name });
  return stored;
}

/** Refuses a write to a built-in: they are always there and always the same. */
export function refuseBuiltin(name: string): void {
  if (isBuiltinPolicyName(name)) {
    throw new LetKiteError('forbidden', `"${name}" is a built-in policy and cannot be changed or deleted`, {
      policy: name,
      builtin: true,
    });
  }
}

/** The problems of a refused document, from the `invalid_params` error the policy parser throws. */
export function issuesOf(err: unknown): ConfigIssue[] | null {
  if (!(err instanceof LetKiteError) || err.code !== 'invalid_params') return null;
  const issues = (err.details as { issues?: unknown } | undefined)?.issues;
  return Array.isArray(issues) ? (issues as ConfigIssue[]) : [{ path: '', message: err.message }];
}

function tomlValue(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    return `{ ${Object.entries(v)
      .map(([k, x]) => `${k} = ${tomlValue(x)}`)
      .join(', ')} }`;
  }
  return JSON.stringify(v);
}

/** A built-in written as TOML (parsed back it is the same policy: a test checks it). */
export function builtinSource(policy: Policy): string {
  const { commands, approval, version: _v, ...top } = policy;
  const lines = [`# The built-in "${policy.name}" policy (read-only). Save a copy under a new name to change it.`];
  for (const [k, v] of Object.entries(top)) lines.push(`${k} = ${tomlValue(v)}`);
  lines.push('', '[commands]');
  for (const [k, v] of Object.entries(commands)) lines.push(`${k} = ${tomlValue(v)}`);
  lines.push('', '[approval]');
  for (const [k, v] of Object.entries(approval)) {
    // The timeout is milliseconds once parsed; the document spells it as a duration.
    lines.push(`${k} = ${k === 'timeout' ? JSON.stringify(`${Math.round(Number(v) / 60_000)}m`) : tomlValue(v)}`);
  }
  return `${lines.join('\n')}\n`;
}
