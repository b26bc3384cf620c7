import { z } from 'zod';
import { agentOp } from './agent-op';

/**
 * Parameters of the operations an agent performs (the `op` and `params` of a request frame). These are the
 * agent-side shapes; MCP tool inputs (tools/*.ts) are mapped onto them by the gateway after its own checks.
 */

export const ExecParams = z.object({
  /** A command string run by `/bin/sh -c` (shell mode only). */
  command: z.string().max(100_000).optional(),
  /** A program and its arguments, started with execve and no shell. */
  argv: z.array(z.string().max(100_000)).min(1).max(10_000).optional(),
  cwd: z.string().max(4096).optional(),
  env: z.record(z.string(), z.string()).optional(),
  stdin: z
    .string()
    .max(10 * 1024 * 1024)
    .optional(),
  timeout_ms: z
    .number()
    .int()
    .positive()
    .max(24 * 3600_000),
  /** Per stream; output past this is dropped (newest kept) and `truncated` set. */
  max_output_bytes: z
    .number()
    .int()
    .positive()
    .max(64 * 1024 * 1024),
});
export type ExecParams = z.infer<typeof ExecParams>;

/**
 * The agent's final answer to `exec`. The output itself arrives before it as `chunk` frames on the streams
 * `stdout` and `stderr` (so no single frame has to hold it), each stream already capped to `max_output_bytes`.
 */
export const ExecResult = z.object({
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  duration_ms: z.number(),
  truncated: z.boolean(),
  timed_out: z.boolean(),
});
export type ExecResult = z.infer<typeof ExecResult>;

/** This module's agent operations (agent-ops.ts joins every module's into `agentOps`). */
export const execOps = {
  exec: agentOp(ExecParams, ExecResult, 'chunks'),
} as const;
