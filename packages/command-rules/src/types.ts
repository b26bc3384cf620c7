import type { CommandRule, Verdict } from './policy-schema';

/** Where a verdict came from (DESIGN §4). */
export const reasonLayers = [
  'catastrophic',
  'risky',
  'rule',
  'ceiling',
  'ruleset',
  'default',
  'opaque',
  'parse',
  'allowlist',
  'environment',
  'unattended',
] as const;
export type ReasonLayer = (typeof reasonLayers)[number];

/** One piece of the explanation of a verdict. */
export interface Reason {
  /** The words of the command this is about (as written; expansions shown as in the source). Empty for the line. */
  command: string[];
  layer: ReasonLayer;
  /** The rule that matched, when a rule did (`ruleset-name: pattern` for rule sets). */
  rule?: string;
  verdict: Verdict;
  message: string;
  /**
   * `stdin` when the reason is about a script the command reads from its standard input (stdin-readers.ts), not
   * about the command's own words.
   */
  source?: 'stdin';
}

export interface Evaluation {
  verdict: Verdict;
  reasons: Reason[];
}

export interface EvaluateOptions {
  /** The AI resent the call with `confirm=true`: a `confirm` verdict becomes `allow`; approve and deny stay. */
  confirm?: boolean;
  /** The machine ceiling's extra rules: a separate layer, first match wins within it, strictest overall. */
  ceilingRules?: CommandRule[];
  /** Directories whose programs a bare-name allow rule may match. Default: the usual system directories. */
  trustedDirs?: string[];
  /**
   * The environment the command gets (exec's `env`): judged as if each entry were written `NAME=value` before the
   * command (`judgeEnvironment`). In allowlist mode a variable that matters is refused outright.
   */
  env?: Record<string, string>;
}

/** A piece of a word: literal text (quoted or not) or an expansion whose value is unknown until run time. */
export type Segment = { lit: string; quoted: boolean } | { dyn: string; quoted: boolean; name?: string };

/** A word of a command after quote removal and brace expansion. */
export interface Arg {
  /** The literal value with unknown parts left out. */
  value: string;
  /** How to show it: literal text, expansions as written. */
  display: string;
  /** Contains an expansion, so its value is known only at run time. */
  dynamic: boolean;
  /** May turn into zero or several words at run time (unquoted expansion or glob). */
  splittable: boolean;
  /** Contains an unquoted glob character. */
  glob: boolean;
  segments: Segment[];
}
