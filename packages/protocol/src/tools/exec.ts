import { z } from 'zod';
import { defineTool } from '../define-tool';
import { ConfirmCommand, exactlyOneOf, gatedCallErrors, MachineRef, reachingMachineErrors } from './common';

/** The fields of exec (exec_many and job_start reuse them), before the exactly-one rule is added. */
export const execFields = z.strictObject({
  machine: MachineRef,
  command: z
    .string()
    .min(1)
    .max(100_000)
    .optional()
    .describe('A command line run by /bin/sh -c. Give either command or argv.'),
  argv: z
    .array(z.string().max(100_000))
    .min(1)
    .max(10_000)
    .optional()
    .describe('Program and arguments, run without a shell. Give either command or argv.'),
  cwd: z.string().max(4096).optional().describe('Working directory on the machine.'),
  env: z.record(z.string(), z.string()).optional().describe('Extra environment variables.'),
  stdin: z
    .string()
    .max(10 * 1024 * 1024)
    .optional()
    .describe('Text written to the standard input.'),
  timeout_s: z
    .number()
    .int()
    .min(1)
    .max(3600)
    .optional()
    .describe('Seconds before the process group is killed (default 60).'),
  confirm: ConfirmCommand,
});

export const execInput = exactlyOneOf(execFields, ['command', 'argv']);

export const execOutput = z.object({
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  duration_ms: z.number(),
  truncated: z.boolean(),
  timed_out: z.boolean(),
  masked_count: z.number().int(),
});

export const exec = defineTool({
  name: 'exec',
  title: 'Run a command',
  description:
    'Runs one command on a machine and returns its exit code and output. Output is capped (newest kept) and known secret formats are masked.',
  input: execInput,
  output: execOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  errors: [...reachingMachineErrors, ...gatedCallErrors],
  gated: true,
});
