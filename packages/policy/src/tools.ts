import { z } from 'zod';

/** Every MCP tool name (DESIGN §7), in the order the DESIGN lists them. Role and connection grants name these. */
export const toolNames = [
  'machines_list',
  'exec',
  'exec_many',
  'shell_run',
  'job_start',
  'job_status',
  'job_output',
  'job_stop',
  'read_file',
  'list_dir',
  'write_file',
  'delete_path',
  'git_status',
  'git_diff',
  'copy_between_hosts',
  'transfer_start',
  'transfer_status',
  'terminal_open',
  'terminal_send',
  'terminal_read',
  'terminal_wait',
  'terminal_close',
  'tunnel_open',
  'tunnel_close',
  'tunnels_list',
  'gui_observe',
  'gui_act',
  'wake_node',
  'wake_device',
  'approval_wait',
] as const;
export const ToolName = z.enum(toolNames);
export type ToolName = z.infer<typeof ToolName>;

/** The tools a policy may put under `approval.tools` (DESIGN §6): the ones that change or reach something. */
export const approvalTools = [
  'exec',
  'exec_many',
  'shell_run',
  'job_start',
  'write_file',
  'delete_path',
  'copy_between_hosts',
  'transfer_start',
  'gui_act',
  'tunnel_open',
  'terminal_open',
  'wake_node',
  'wake_device',
] as const satisfies readonly ToolName[];
export const ApprovalTool = z.enum(approvalTools);
export type ApprovalTool = z.infer<typeof ApprovalTool>;
