import { type ToolName, toolNames } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';

/**
 * OAuth scopes are the tool groups of DESIGN §7. A connection's grant stores the tool names its scopes expand
 * to (what `effectivePermissions` reads); the token response and the consent page speak in groups.
 */
export const toolGroups = {
  commands: ['exec', 'exec_many', 'shell_run'],
  jobs: ['job_start', 'job_status', 'job_output', 'job_stop'],
  files: ['read_file', 'list_dir', 'write_file', 'delete_path', 'git_status', 'git_diff'],
  transfer: ['copy_between_hosts', 'transfer_start', 'transfer_status'],
  terminals: ['terminal_open', 'terminal_send', 'terminal_read', 'terminal_wait', 'terminal_close'],
  tunnels: ['tunnel_open', 'tunnel_close', 'tunnels_list'],
  screen: ['gui_observe', 'gui_act'],
  power: ['wake_node', 'wake_device'],
} as const satisfies Record<string, readonly ToolName[]>;

export type ToolGroup = keyof typeof toolGroups;
export const toolGroupNames = Object.keys(toolGroups) as ToolGroup[];

/** Tools every connection has: listing machines and waiting for an approval reach nothing by themselves. */
export const baseTools = ['machines_list', 'approval_wait'] as const satisfies readonly ToolName[];

/** Short labels for the consent page. */
export const toolGroupLabels: Record<ToolGroup, string> = {
  commands: 'Run commands',
  jobs: 'Run background jobs',
  files: 'Read and write files',
  transfer: 'Copy files between machines',
  terminals: 'Open terminals',
  tunnels: 'Open network tunnels',
  screen: 'See and drive the screen',
  power: 'Wake machines',
};

export function isToolGroup(value: string): value is ToolGroup {
  return Object.hasOwn(toolGroups, value);
}

/**
 * Parses a space-separated OAuth `scope` into known groups. Unknown scopes are dropped rather than refused:
 * RFC 6749 §3.3 lets the server grant less than asked, and clients add scopes of their own (`offline_access`).
 */
export function parseScope(scope: string | undefined | null): ToolGroup[] {
  const words = (scope ?? '').split(' ').filter((w) => w.length > 0);
  return toolGroupNames.filter((g) => words.includes(g));
}

/** The tool names a set of groups grants, base tools included. */
export function toolsOfGroups(groups: readonly ToolGroup[]): ToolName[] {
  return [...baseTools, ...groups.flatMap((g) => toolGroups[g])];
}

/** The group a tool belongs to; base tools belong to none. */
export function groupOfTool(tool: string): ToolGroup | null {
  for (const g of toolGroupNames) if ((toolGroups[g] as readonly string[]).includes(tool)) return g;
  return null;
}

export function formatScope(groups: readonly ToolGroup[]): string {
  return toolGroupNames.filter((g) => groups.includes(g)).join(' ');
}

/**
 * The tool names of a grant given as a list of groups and/or single tool names (the CLI's `--scopes`); base tools
 * are always included. Throws `invalid_params` naming an unknown entry.
 */
export function toolsForScopeList(list: readonly string[]): ToolName[] {
  const tools = new Set<ToolName>(baseTools);
  for (const entry of list) {
    if (isToolGroup(entry)) for (const t of toolGroups[entry]) tools.add(t);
    else if ((toolNames as readonly string[]).includes(entry)) tools.add(entry as ToolName);
    else {
      throw new LetKiteError('invalid_params', `scope "${entry}" is neither a tool group nor a tool`, {
        groups: toolGroupNames,
      });
    }
  }
  return toolNames.filter((t) => tools.has(t));
}
