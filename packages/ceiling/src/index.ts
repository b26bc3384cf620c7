/**
 * @letkite/ceiling — the machine's own bound (DESIGN §5): the `ceiling.toml` schema, its parsing with
 * line-numbered errors, the documented defaults, the pinned approvers' keys (COSE → JWK), rendering, the clamp of
 * a policy to a ceiling (with the ceiling's own program allowlist), the effective-permission evaluation over role,
 * connection, policy and ceiling, and the ownership/mode rule for the file.
 *
 * Does not own: reading or watching the file, or failing closed (the agent and the CLI do that, with these
 * functions), the policy format and the path/tunnel rules (@letkite/policy), command evaluation
 * (@letkite/command-rules).
 * Depends on: @letkite/policy, @letkite/command-rules (CommandRule), @letkite/protocol, zod. Pure: no I/O.
 */
export {
  AccountName,
  Ceiling,
  CeilingCommandMode,
  type CeilingInput,
  ceilingCommandModes,
  PinnedApprover,
  verifiesApprovals,
} from './ceiling-schema';
export { type ClampedPolicy, clampToCeiling } from './clamp-to-ceiling';
export {
  type ApproverAlgorithm,
  type ApproverJwk,
  type ApproverKey,
  approverAlgorithms,
  decodeBase64url,
  parseCoseKey,
} from './cose-key';
export { CLOSED_CEILING, DEFAULT_CEILING, DEFAULT_CEILING_PATH } from './defaults';
export {
  type EffectivePermissions,
  type EffectivePermissionsInput,
  effectivePermissions,
  type ToolGrant,
} from './effective-permissions';
export {
  type CeilingFileModeInput,
  type CeilingFileProblem,
  type CeilingFileProblemCode,
  ceilingFileProblems,
  checkCeilingFileMode,
} from './file-mode';
export { type CommandJudgement, commandRefusal, judgeCommand } from './judge-command';
export { parseCeiling, parseCeilingToml } from './parse-ceiling';
export { renderCeilingToml, renderDefaultCeilingToml } from './render-ceiling';
