import { CommandPolicy } from '@letkite/command-rules';
import { z } from 'zod';
import { ApprovalTimeout, DEFAULT_APPROVAL_TIMEOUT_MS } from './duration';
import { FileRules } from './file-rule';
import { GuiLevel, ShellLevel } from './levels';
import { PathPattern } from './path-pattern';
import { ApprovalTool } from './tools';
import { TunnelTarget } from './tunnel-target';

/** Who may approve a gated call (DESIGN §6). */
export const approverKinds = ['connector', 'any_admin', 'four_eyes'] as const;
export const ApproverKind = z.enum(approverKinds);
export type ApproverKind = z.infer<typeof ApproverKind>;

/** The `[approval]` table. `timeout` is milliseconds once parsed (written `"10m"`, 1m .. 24h). */
export const ApprovalSettings = z.strictObject({
  /** Tools that always need a human, whatever the command rules say. */
  tools: z.array(ApprovalTool).default([]),
  approvers: ApproverKind.default('connector'),
  timeout: ApprovalTimeout.default(DEFAULT_APPROVAL_TIMEOUT_MS),
});
export type ApprovalSettings = z.infer<typeof ApprovalSettings>;

const noControl = (s: string) => !/[\0-\x1f\x7f]/.test(s);

/** A GUI application name as the screen tools report it (exact match). */
export const AppName = z.string().min(1).max(256).refine(noControl, { message: 'contains a control character' });

/**
 * A policy (DESIGN §4): account-owned, chosen per connection. Every key left out grants nothing more than its
 * default, and the defaults grant nothing: no commands, no screen, no files, no tunnels. Unknown keys are errors,
 * so a typo cannot silently change what a policy means.
 */
export const Policy = z.strictObject({
  /** Format version of this document (not the stored revision that approvals bind to). */
  version: z.literal(1).default(1),
  name: z.string().min(1).max(64).refine(noControl, { message: 'contains a control character' }),
  shell: ShellLevel.default('off'),
  gui: GuiLevel.default('off'),
  /** When non-empty: the screen tools may only see and drive these applications. */
  gui_apps: z.array(AppName).default([]),
  /** Reach of the file tools; the most specific entry decides, nothing covered means no access. */
  files: FileRules.default([]),
  /** Paths that look as if they did not exist; beats `files`. */
  deny: z.array(PathPattern).default([]),
  tunnel_targets: z.array(TunnelTarget).default([]),
  commands: CommandPolicy.prefault({}),
  approval: ApprovalSettings.prefault({}),
});
export type Policy = z.infer<typeof Policy>;
/** What a policy document may contain before defaults are applied (TOML or JSON). */
export type PolicyInput = z.input<typeof Policy>;
