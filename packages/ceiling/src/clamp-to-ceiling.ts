import {
  type CommandRule,
  type FileRule,
  intersectTunnelTargets,
  minGui,
  minShell,
  type Policy,
} from '@letkite/policy';
import type { Ceiling } from './ceiling-schema';

/**
 * A policy after the machine's ceiling had its say. Same meaning as `Policy`, except:
 * - `file_layers` replaces `files`: `[policy.files, ceiling.files]`. A path's access is the least any layer
 *   gives it (`layeredFileAccess` in @letkite/policy), so "rw only where both say rw" holds exactly, globs
 *   included, which a merged single list could not promise.
 * - `rule_layers` are extra command-rule layers (the ceiling's `rules`): within a layer the first match wins and
 *   no match gives no verdict; the strictest verdict over `commands` and every layer is the answer.
 * - `ceiling_allow` is the ceiling's own program allowlist when the ceiling forces allowlist mode (null otherwise):
 *   a command must be allowed by it AND by `commands.allow` (`judgeCommand` checks both).
 * - `terminals`, `transfers`, `wake`, `run_as` come from the ceiling (policies have no say in them), with
 *   `terminals` already false where no shell exists (shell off or allowlist mode).
 */
export interface ClampedPolicy extends Omit<Policy, 'files'> {
  file_layers: FileRule[][];
  rule_layers: CommandRule[][];
  ceiling_allow: string[] | null;
  terminals: boolean;
  transfers: boolean;
  wake: boolean;
  run_as: string;
}

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

/**
 * Empty `gui_apps` means "any application", so the combination is: one side's list when the other is empty,
 * else the intersection, and when that is empty the screen is off (an empty list would mean "any" again).
 */
function clampGuiApps(
  policyApps: readonly string[],
  ceilingApps: readonly string[],
): { apps: string[]; none: boolean } {
  if (ceilingApps.length === 0) return { apps: [...policyApps], none: false };
  if (policyApps.length === 0) return { apps: [...ceilingApps], none: false };
  const apps = policyApps.filter((app) => ceilingApps.includes(app));
  return { apps: unique(apps), none: apps.length === 0 };
}

/** The policy clamped to the machine's ceiling: nothing in the result exceeds either of them. */
export function clampToCeiling(policy: Policy, ceiling: Ceiling): ClampedPolicy {
  const shell = minShell(policy.shell, ceiling.shell);
  const mode = ceiling.commands_mode === 'allowlist' ? 'allowlist' : policy.commands.mode;
  const guiApps = clampGuiApps(policy.gui_apps, ceiling.gui_apps);
  return {
    version: policy.version,
    name: policy.name,
    shell,
    gui: guiApps.none ? 'off' : minGui(policy.gui, ceiling.gui),
    gui_apps: guiApps.apps,
    file_layers: [policy.files.map((r) => ({ ...r })), ceiling.files.map((r) => ({ ...r }))],
    deny: unique([...policy.deny, ...ceiling.deny]),
    tunnel_targets: intersectTunnelTargets(policy.tunnel_targets, ceiling.tunnel_targets),
    commands: {
      ...policy.commands,
      mode,
      rulesets: [...policy.commands.rulesets],
      rules: policy.commands.rules.map((r) => ({ ...r })),
      allow: [...policy.commands.allow],
    },
    rule_layers: ceiling.rules.length > 0 ? [ceiling.rules.map((r) => ({ ...r }))] : [],
    ceiling_allow: ceiling.commands_mode === 'allowlist' ? [...ceiling.allow] : null,
    approval: { ...policy.approval, tools: [...policy.approval.tools] },
    terminals: ceiling.terminals && shell !== 'off' && mode === 'shell',
    transfers: ceiling.transfers,
    wake: ceiling.wake,
    run_as: ceiling.run_as,
  };
}
