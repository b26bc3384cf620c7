/** How `shell = "sandboxed"` is enforced on each platform (DESIGN §4). Pure. */
export type SandboxMechanism = 'landlock' | 'seatbelt';

export type SandboxSupport = { supported: true; mechanism: SandboxMechanism } | { supported: false; reason: string };

/**
 * Whether this platform can run sandboxed shells at all. Linux uses the Landlock helper (whose availability on
 * this kernel is a separate, run-time question: `probeSandbox`), macOS uses Seatbelt. Windows offers only
 * `off | full`: a `sandboxed` request there is refused, never run unsandboxed.
 */
export function sandboxSupportFor(platform: NodeJS.Platform): SandboxSupport {
  switch (platform) {
    case 'linux':
      return { supported: true, mechanism: 'landlock' };
    case 'darwin':
      return { supported: true, mechanism: 'seatbelt' };
    case 'win32':
      return { supported: false, reason: 'Windows supports shell = "off" or "full" only; "sandboxed" is refused' };
    default:
      return { supported: false, reason: `no sandbox for platform "${platform}"; "sandboxed" is refused` };
  }
}
