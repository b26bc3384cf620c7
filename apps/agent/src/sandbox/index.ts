/**
 * The sandbox for `shell = "sandboxed"` (DESIGN §4, issue #4). Owns: the spec of what one command may touch, the
 * Linux Landlock helper wrapper (native/letkite-sandbox.c), the macOS Seatbelt profile and the per-platform
 * answer. Does not own: choosing paths (policy/ceiling clamping), creating the tmp dir, or spawning. Fails
 * closed: see README.md.
 */
export {
  assertSandboxUsable,
  encodeEnvironment,
  type ProbeOptions,
  probeSandbox,
  SANDBOX_ERROR_PREFIX,
  SANDBOX_REFUSED_EXIT,
  type SandboxLaunch,
  type SandboxProbe,
  type SandboxRefusalKind,
  sandboxHelperEnv,
  sandboxHelperPath,
  sandboxRefusal,
  sandboxRefusalKinds,
  type WrapOptions,
  wrapInSandbox,
} from './linux';
export { type SandboxMechanism, type SandboxSupport, sandboxSupportFor } from './platform';
export { SANDBOX_EXEC, seatbeltProfile, wrapInSeatbelt } from './seatbelt';
export { MAX_SANDBOX_PATHS, MAX_SANDBOX_PORTS, parseSandboxSpec, SandboxSpec } from './spec';
