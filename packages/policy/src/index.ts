/**
 * @letkite/policy — the policy format (DESIGN §4), its built-ins, and the path and tunnel rules every layer uses.
 *
 * Owns: the `Policy` schema and its TOML/JSON parsing with line-numbered errors; the built-ins `full` and
 * `read-only`; path matching for `files`/`deny`; tunnel-target matching; the order of shell/GUI/file levels.
 * Does not own: the `[commands]` table and command evaluation (@letkite/command-rules), the machine ceiling and
 * the clamp/effective-permission functions that combine the two (@letkite/ceiling).
 * Depends on: @letkite/protocol (LetKiteError), @letkite/command-rules (CommandPolicy), zod, smol-toml.
 * Pure: no I/O, no clock.
 */

/** The command-rule shape, re-exported for the ceiling's `rules` (its owner is @letkite/command-rules). */
export { CommandRule } from '@letkite/command-rules';
export {
  type BuiltinPolicyName,
  builtinPolicies,
  builtinPolicyNames,
  DEFAULT_SECRET_PATHS,
  FULL_POLICY,
  READ_ONLY_POLICY,
} from './builtins';
export {
  type ConfigIssue,
  formatKeyPath,
  invalidDocument,
  issuesFromZod,
  parseTomlWith,
  parseWith,
} from './config-issues';
export {
  ApprovalTimeout,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  MAX_APPROVAL_TIMEOUT_MS,
  MIN_APPROVAL_TIMEOUT_MS,
  parseDuration,
} from './duration';
export { type FileReach, fileAccess, isDenied, type LayeredFileReach, layeredFileAccess } from './file-access';
export { FileRule, FileRules } from './file-rule';
export {
  atLeastGui,
  type FileAccess,
  FileAccessLevel,
  fileAccessLevels,
  fileAccessResults,
  GuiLevel,
  guiLevels,
  minAccess,
  minGui,
  minShell,
  ShellLevel,
  shellLevels,
} from './levels';
export { parsePolicy, parsePolicyToml } from './parse-policy';
export { type PathContext, PathPattern, pathSegments } from './path-pattern';
export { AppName, ApprovalSettings, ApproverKind, approverKinds, Policy, type PolicyInput } from './policy-schema';
export { ApprovalTool, approvalTools, ToolName, toolNames } from './tools';
export {
  formatTunnelTarget,
  intersectTunnelTargets,
  matchTunnelTarget,
  type ParsedTunnelTarget,
  parseTunnelTarget,
  TunnelTarget,
} from './tunnel-target';
