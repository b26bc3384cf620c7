/**
 * @letkite/command-rules — decides allow, confirm, approve or deny for a command line (DESIGN §4).
 *
 * Owns: bash parsing (tree-sitter-bash), unwrapping of wrappers and nested shells, the opaque checks, rule
 * patterns, the built-in catastrophic and risky layers, the built-in rule sets and allowlist mode.
 * Does not own: where policies come from (packages/policy), the ceiling file (packages/ceiling), asking humans.
 * Pure: the one I/O is loading the bash grammar's .wasm once from the tree-sitter-bash package, in
 * `loadCommandRules()`, which must finish before the synchronous `evaluateCommand()` is called;
 * `unloadCommandRules()` lets the grammar's memory go until the next load (the agent, when idle).
 */
export { isProtectedTarget } from './builtin-layers';
export { isLoaderVariable, isSensitiveVariable, judgeEnvironment } from './environment';
export { evaluateCommand } from './evaluate';
export { CommandPolicyError, parseCommandPolicy } from './parse-policy';
export { defaultTrustedDirs } from './paths';
export { type CompiledPattern, compilePattern, PatternError } from './pattern';
export {
  CommandMode,
  CommandPolicy,
  type CommandPolicyInput,
  CommandRule,
  commandModes,
  RulesetName,
  rulesetNames,
  Verdict,
  verdicts,
} from './policy-schema';
export {
  type CompiledRuleset,
  compileRuleset,
  type RulesetDefinition,
  RulesetError,
  type RulesetRule,
} from './ruleset-check';
export { loadRuleset, rulesetDefinitions } from './rulesets';
export { commandRulesLoaded, loadCommandRules, maxCommandLength, unloadCommandRules } from './shell-parser';
export { judgeStdin, readsCodeFromStdin, readsShellScriptFromStdin } from './stdin-readers';
export { type EvaluateOptions, type Evaluation, type Reason, type ReasonLayer, reasonLayers } from './types';
export { strictestVerdict, verdictStrictness } from './verdict';
