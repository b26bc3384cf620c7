/**
 * @letkite/command-rules — decides allow, confirm, approve or deny for a command line (DESIGN §4).
 * Pure: the one I/O is loading the bash grammar's .wasm once from the tree-sitter-bash package.
 */
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
