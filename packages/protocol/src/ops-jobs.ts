import { z } from 'zod';
import { agentOp } from './agent-op';
import { HandleId } from './ops-shell';

/**
 * Agent operations for background jobs. The agent keeps each job's combined output (stdout and stderr
 * interleaved as they arrived) in a bounded file under its state directory, addressed by absolute byte offsets,
 * until the job expires; so output survives the gateway restarting and the agent reconnecting.
 */

export const jobStates = ['running', 'exited', 'killed', 'timed_out', 'stopped', 'lost'] as const;
/**
 * running: still going. exited: ended by itself (see exit_code). killed: ended by a signal nobody here sent.
 * timed_out: ended by its own time limit. stopped: ended by job_stop. lost: the agent restarted while it ran, so
 * its end and the rest of its output are unknown.
 */
export const JobState = z.enum(jobStates);
export type JobState = z.infer<typeof JobState>;

export const JobStartParams = z.object({
  command: z.string().min(1).max(100_000).optional(),
  argv: z.array(z.string().max(100_000)).min(1).max(10_000).optional(),
  cwd: z.string().max(4096).optional(),
  env: z.record(z.string(), z.string()).optional(),
  timeout_ms: z
    .number()
    .int()
    .positive()
    .max(7 * 24 * 3600_000),
});
export type JobStartParams = z.infer<typeof JobStartParams>;

export const JobInfo = z.object({
  job_id: z.string(),
  state: JobState,
  /** The command line or argv it runs (as given). */
  command: z.union([z.string(), z.array(z.string())]),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  /** Bytes of output produced so far (the absolute end offset). */
  output_bytes: z.number().int(),
  /** Output before this offset was dropped to keep the file bounded (newest kept). */
  output_start: z.number().int(),
  /** Why the state is what it is, when that is not obvious (lost, refused sandbox …). */
  note: z.string().nullable(),
});
export type JobInfo = z.infer<typeof JobInfo>;

export const JobRef = z.object({ job_id: HandleId });
export type JobRef = z.infer<typeof JobRef>;

export const JobOutputParams = z.object({
  job_id: HandleId,
  /** Absolute byte offset to start at (default 0). */
  offset: z.number().int().min(0).default(0),
  /** At most this many bytes (default 32 KiB, at most 60,000). */
  size: z
    .number()
    .int()
    .min(1)
    .max(60_000)
    .default(32 * 1024),
  /** At most this many lines in one page. */
  max_lines: z.number().int().min(1).max(2000).default(2000),
});
export type JobOutputParams = z.infer<typeof JobOutputParams>;

export const JobOutputResult = z.object({
  job_id: z.string(),
  state: JobState,
  /** Where this page really starts: later than asked when that part was dropped or to start on a character. */
  offset: z.number().int(),
  /** Pass this as the next `offset`. Pages end at a line break when the page holds one. */
  next_offset: z.number().int(),
  data: z.string(),
  /** Bytes between the asked offset and `offset` that no longer exist (dropped to keep the file bounded). */
  skipped_bytes: z.number().int(),
  /** Output produced so far; the job may still add more while it runs. */
  output_bytes: z.number().int(),
  /** No more output will come and this page reaches the end. */
  eof: z.boolean(),
});
export type JobOutputResult = z.infer<typeof JobOutputResult>;

export const JobStopResult = JobInfo;
export type JobStopResult = z.infer<typeof JobStopResult>;

/** This module's agent operations (agent-ops.ts joins every module's into `agentOps`). */
export const jobOps = {
  job_start: agentOp(JobStartParams, JobInfo, 'call'),
  job_status: agentOp(JobRef, JobInfo, 'call'),
  job_output: agentOp(JobOutputParams, JobOutputResult, 'call'),
  job_stop: agentOp(JobRef, JobInfo, 'call'),
} as const;
