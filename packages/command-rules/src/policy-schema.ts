import { z } from 'zod';

/** Verdicts, strictest first in `verdictStrictness`. */
export const verdicts = ['allow', 'confirm', 'approve', 'deny'] as const;
export const Verdict = z.enum(verdicts);
export type Verdict = z.infer<typeof Verdict>;

export const commandModes = ['shell', 'allowlist'] as const;
export const CommandMode = z.enum(commandModes);
export type CommandMode = z.infer<typeof CommandMode>;

export const rulesetNames = ['linux-readonly', 'windows-readonly', 'no-destructive', 'deploy'] as const;
export const RulesetName = z.enum(rulesetNames);
export type RulesetName = z.infer<typeof RulesetName>;

/** One rule: a shell-like word pattern and the verdict it gives (first match wins per command). */
export const CommandRule = z.strictObject({ match: z.string().min(1).max(4096), verdict: Verdict });
export type CommandRule = z.infer<typeof CommandRule>;

/**
 * The `[commands]` table of a policy (DESIGN §4). The single source of truth for its shape: packages/policy embeds
 * it, the CLI and the agent parse with it.
 */
export const CommandPolicy = z.strictObject({
  /** shell: rules are a guardrail | allowlist: only listed programs, started without a shell. */
  mode: CommandMode.default('shell'),
  /** Built-in rule sets, checked after the policy's own rules. */
  rulesets: z.array(RulesetName).default([]),
  /** Verdict when no rule matches. */
  default: Verdict.default('approve'),
  rules: z.array(CommandRule).default([]),
  /** Allowlist mode: program + argument patterns. */
  allow: z.array(z.string().min(1).max(4096)).default([]),
});
export type CommandPolicy = z.infer<typeof CommandPolicy>;
export type CommandPolicyInput = z.input<typeof CommandPolicy>;
