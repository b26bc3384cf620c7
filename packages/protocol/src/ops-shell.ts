import { z } from 'zod';
import { agentOp } from './agent-op';

/**
 * Agent operation `shell_run`: one command in a persistent bash session (cwd, exported variables and functions
 * survive between calls). The command is judged by the command rules on both sides like `exec`.
 */

/** A session, job or terminal id: random, unguessable, and only meaningful to the agent that made it. */
export const HandleId = z
  .string()
  .regex(/^[a-z]+_[A-Za-z0-9_-]{8,64}$/, 'not a LetKite handle id')
  .max(80);

/** No NUL: a bash string cannot hold one. */
const CommandText = z
  .string()
  .min(1)
  .max(100_000)
  .refine((s) => !s.includes('\0'), 'a command cannot contain NUL');

export const ShellRunParams = z.object({
  /** Absent: open a new session (its id comes back in the result). */
  session_id: HandleId.optional(),
  command: CommandText,
  timeout_ms: z.number().int().positive().max(3600_000),
  /** Per stream; output past this is dropped (newest kept) and `truncated` set. */
  max_output_bytes: z
    .number()
    .int()
    .positive()
    .max(64 * 1024 * 1024),
});
export type ShellRunParams = z.infer<typeof ShellRunParams>;

/**
 * The agent's final answer to `shell_run`. stdout and stderr arrive before it as `chunk` frames (streams
 * `stdout`, `stderr`), like `exec`.
 */
export const ShellRunResult = z.object({
  session_id: z.string(),
  /** The command's exit status; null when the session ended before reporting one (timeout, cancel). */
  exit_code: z.number().int().nullable(),
  /** The session's working directory after the command. */
  cwd: z.string().nullable(),
  truncated: z.boolean(),
  timed_out: z.boolean(),
  /** The session's shell exited (the command ran `exit`, was killed, or timed out): the next call starts anew. */
  session_ended: z.boolean(),
  duration_ms: z.number(),
});
export type ShellRunResult = z.infer<typeof ShellRunResult>;

/** This module's agent operations (agent-ops.ts joins every module's into `agentOps`). */
export const shellOps = {
  shell_run: agentOp(ShellRunParams, ShellRunResult, 'chunks'),
} as const;
