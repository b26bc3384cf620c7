import { atLeastGui, type FileAccess, layeredFileAccess, type Policy, type ToolName, toolNames } from '@letkite/policy';
import type { Ceiling } from './ceiling-schema';
import { type ClampedPolicy, clampToCeiling } from './clamp-to-ceiling';

/**
 * What a role or a connection grants, kept deliberately simple until the identity work lands: the MCP tool
 * names it allows and the machine ids it reaches, each a list or `'*'` for all. A connection's grant is
 * whatever its creator chose at consent; intersecting it with the creator's role is what keeps a connection
 * from exceeding its creator.
 */
export interface ToolGrant {
  tools: '*' | readonly string[];
  machines: '*' | readonly string[];
}

export interface EffectivePermissionsInput {
  role: ToolGrant;
  connection: ToolGrant;
  /** The machine the call is for. */
  machine: string;
  policy: Policy;
  ceiling: Ceiling;
  /**
   * Home of the ceiling's `run_as` account, for `~` in file rules. The agent passes the real one; the gateway
   * may leave it out and gets `/root` for root, `/home/<run_as>` otherwise (it only decides which tools to list).
   */
  home?: string;
}

/** The strictest combination of role, connection, policy and ceiling for one machine. */
export interface EffectivePermissions extends ClampedPolicy {
  /** Tools this connection may call on this machine, in DESIGN §7 order. Others are not even listed. */
  tools: ToolName[];
}

const grants = (list: '*' | readonly string[], item: string) => list === '*' || list.includes(item);

/** Sample paths for each file rule: the path itself, with wildcards filled in, `~` expanded, `*` as `/`. */
function samplePaths(clamped: ClampedPolicy, home: string): string[] {
  const samples = clamped.file_layers.flat().map((rule) => {
    if (rule.path === '*' || rule.path === '**') return '/';
    const expanded = rule.path === '~' || rule.path.startsWith('~/') ? `${home}/${rule.path.slice(1)}` : rule.path;
    const segments = expanded
      .split('/')
      .filter((s) => s !== '' && s !== '**')
      .map((s) => s.replace(/[*?]/g, 'x'));
    return `/${segments.join('/')}`;
  });
  return [...new Set(samples)];
}

/** The most access any sampled path gets: whether the file tools can do anything at all on this machine. */
function bestFileAccess(clamped: ClampedPolicy, home: string): FileAccess {
  let best: FileAccess = 'none';
  for (const path of samplePaths(clamped, home)) {
    const access = layeredFileAccess(path, { layers: clamped.file_layers, deny: clamped.deny, home });
    if (access === 'rw') return 'rw';
    if (access === 'ro') best = 'ro';
  }
  return best;
}

function toolAvailable(tool: ToolName, p: ClampedPolicy, files: FileAccess): boolean {
  switch (tool) {
    case 'machines_list':
    case 'approval_wait':
      return true;
    case 'exec':
    case 'exec_many':
    case 'job_start':
    case 'job_status':
    case 'job_output':
    case 'job_stop':
      return p.shell !== 'off';
    case 'shell_run':
      return p.shell !== 'off' && p.commands.mode === 'shell';
    case 'terminal_open':
    case 'terminal_send':
    case 'terminal_read':
    case 'terminal_wait':
    case 'terminal_close':
      return p.terminals;
    case 'read_file':
    case 'list_dir':
    case 'git_status':
    case 'git_diff':
      return files !== 'none';
    case 'write_file':
    case 'delete_path':
      return files === 'rw';
    case 'copy_between_hosts':
    case 'transfer_start':
    case 'transfer_status':
      return p.transfers && files !== 'none';
    case 'tunnel_open':
    case 'tunnel_close':
    case 'tunnels_list':
      return p.tunnel_targets.length > 0;
    case 'gui_observe':
      return atLeastGui(p.gui, 'observe');
    case 'gui_act':
      return p.gui === 'act';
    case 'wake_node':
    case 'wake_device':
      return p.wake;
  }
}

/**
 * Role and connection decide whether a tool and the machine may be used at all; policy and ceiling are clamped
 * (`clampToCeiling`) and decide what each tool may do. A tool is listed only when every layer allows it and the
 * clamped settings leave it something to do (no `exec` when the shell is off, no `write_file` without an `rw`
 * path …).
 */
export function effectivePermissions(input: EffectivePermissionsInput): EffectivePermissions {
  const clamped = clampToCeiling(input.policy, input.ceiling);
  const reachable = grants(input.role.machines, input.machine) && grants(input.connection.machines, input.machine);
  const home = input.home ?? (clamped.run_as === 'root' ? '/root' : `/home/${clamped.run_as}`);
  const files = bestFileAccess(clamped, home);
  const tools = reachable
    ? toolNames.filter(
        (tool) =>
          grants(input.role.tools, tool) && grants(input.connection.tools, tool) && toolAvailable(tool, clamped, files),
      )
    : [];
  return { ...clamped, tools };
}
