import { compilePolicy } from './compiled-policy';
import { compilePattern } from './pattern';
import { CommandPolicy } from './policy-schema';

/** A `[commands]` table that is not valid: its shape, a rule pattern, or a rule set. `issues` name the paths. */
export class CommandPolicyError extends Error {
  constructor(readonly issues: Array<{ path: string; message: string }>) {
    super(issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; '));
    this.name = 'CommandPolicyError';
  }
}

/** Validates a `[commands]` table and compiles its patterns, reporting every problem at once. */
export function parseCommandPolicy(input: unknown): CommandPolicy {
  const result = CommandPolicy.safeParse(input ?? {});
  if (!result.success) {
    throw new CommandPolicyError(
      result.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    );
  }
  const policy = result.data;
  const issues: Array<{ path: string; message: string }> = [];
  const check = (path: string, pattern: string) => {
    try {
      compilePattern(pattern);
    } catch (error) {
      issues.push({ path, message: (error as Error).message });
    }
  };
  for (const [i, rule] of policy.rules.entries()) check(`rules.${i}.match`, rule.match);
  for (const [i, pattern] of policy.allow.entries()) check(`allow.${i}`, pattern);
  if (issues.length > 0) throw new CommandPolicyError(issues);
  compilePolicy(policy);
  return policy;
}
