import { type ConfigIssue, type Policy, parsePolicyToml } from '@letkite/policy';
import { PolicyName, ValidatePolicyRequest } from '@letkite/protocol/api';
import { isBuiltinPolicyName } from '../policy/resolve-policy';
import { defineService } from '../services/define-service';
import type { ServiceContext } from '../services/service-context';
import { issuesOf } from './policy-views';

/**
 * Checks a policy document as a save would: TOML syntax, the policy schema, and the name (a valid policy name,
 * not a built-in's). Every problem comes back with its line, so the editor can mark each one.
 */
export function checkPolicySource(
  source: string,
): { policy: Policy; issues: [] } | { policy: null; issues: ConfigIssue[] } {
  let policy: Policy;
  try {
    policy = parsePolicyToml(source);
  } catch (err) {
    const issues = issuesOf(err);
    if (issues === null) throw err;
    return { policy: null, issues };
  }
  const line = nameLine(source);
  const at = line === undefined ? {} : { line };
  const name = PolicyName.safeParse(policy.name);
  if (!name.success) {
    return {
      policy: null,
      issues: [{ path: 'name', ...at, message: name.error.issues[0]?.message ?? 'invalid name' }],
    };
  }
  if (isBuiltinPolicyName(policy.name)) {
    return { policy: null, issues: [{ path: 'name', ...at, message: `"${policy.name}" is a built-in policy's name` }] };
  }
  return { policy, issues: [] };
}

/** The line of the top-level `name = …` key, for an issue about the name. */
function nameLine(source: string): number | undefined {
  const lines = source.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*\[/.test(lines[i] ?? '')) return undefined;
    if (/^\s*name\s*=/.test(lines[i] ?? '')) return i + 1;
  }
  return undefined;
}

/** The editor's check as you type: never saves, needs `policies.manage`. */
export const validatePolicy = defineService({
  name: 'policies.validate',
  input: ValidatePolicyRequest,
  permission: 'policies.manage',
  async run(_ctx: ServiceContext<unknown>, input) {
    const checked = checkPolicySource(input.source);
    return {
      valid: checked.policy !== null,
      issues: checked.issues,
      parsed: checked.policy as Record<string, unknown> | null,
    };
  },
});
