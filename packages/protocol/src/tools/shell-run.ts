import { z } from 'zod';
import { defineTool } from '../define-tool';
import { HandleId } from '../ops-shell';
import { ConfirmCommand, gatedCallErrors, MachineRef, reachingMachineErrors } from './common';

export const shellRunInput = z.strictObject({
  machine: MachineRef,
  session_id: HandleId.optional().describe(
    'A session from an earlier shell_run on the same machine. Leave out to start a new session.',
  ),
  command: z
    .string()
    .min(1)
    .max(100_000)
    .describe('A bash command line. cd, exported variables and functions persist in the session.'),
  timeout_s: z
    .number()
    .int()
    .min(1)
    .max(3600)
    .optional()
    .describe('Seconds before the session is ended (default 60). A timed-out command ends its session.'),
  confirm: ConfirmCommand,
});

export const shellRunOutput = z.object({
  session_id: z.string(),
  exit_code: z.number().int().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  /** The working directory after the command. */
  cwd: z.string().nullable(),
  truncated: z.boolean(),
  timed_out: z.boolean(),
  session_ended: z.boolean(),
  duration_ms: z.number(),
  masked_count: z.number().int(),
});

export const shellRun = defineTool({
  name: 'shell_run',
  title: 'Run in a shell session',
  description:
    'Runs a command in a persistent bash session on a machine: the working directory, exported variables and functions survive between calls with the same session_id. Commands get no stdin. Sessions end after 15 minutes idle; a machine keeps at most 8. Each command is judged by the command rules like exec. Not available in allowlist mode.',
  input: shellRunInput,
  output: shellRunOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  // not_found: the session ended or belongs to someone else; rate_limited: too many sessions on the machine;
  // unsupported: allowlist mode or no sandbox where one is required.
  errors: [...reachingMachineErrors, ...gatedCallErrors, 'not_found', 'rate_limited', 'unsupported'],
  gated: true,
});
