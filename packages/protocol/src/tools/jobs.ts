import { z } from 'zod';
import { defineTool } from '../define-tool';
import type { ErrorCode } from '../errors';
import { JobInfo, JobOutputParams, JobRef } from '../ops-jobs';
import { exactlyOneOf, MachineRef } from './common';
import { execFields } from './exec';

/** Codes any job call can answer with (reaching the machine, or a job id it does not know). */
const jobCodes = [
  'machine_not_found',
  'ambiguous_machine',
  'machine_offline',
  'blocked_by_ceiling',
  'not_found',
  'timeout',
] as const satisfies readonly ErrorCode[];

export const jobStartInput = exactlyOneOf(
  z.strictObject({
    machine: MachineRef,
    command: execFields.shape.command,
    argv: execFields.shape.argv,
    cwd: execFields.shape.cwd,
    env: execFields.shape.env,
    timeout_s: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 3600)
      .optional()
      .describe('Seconds before the job is ended (default 24 hours).'),
    confirm: execFields.shape.confirm,
  }),
  ['command', 'argv'],
);

export const jobStart = defineTool({
  name: 'job_start',
  title: 'Start a background job',
  description:
    'Starts a command in the background and returns its job id at once. Read its output with job_output (in pages), its state with job_status, end it with job_stop. The machine keeps the output (newest 16 MiB) for 24 hours after the job ends, across gateway restarts; if the agent itself restarts, a running job is reported as lost.',
  input: jobStartInput,
  output: JobInfo,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  errors: [
    ...jobCodes,
    'blocked_by_policy',
    'confirmation_required',
    'approval_denied',
    'approval_expired',
    'too_many_pending_approvals',
    'rate_limited',
    'unsupported',
  ],
  gated: true,
});

export const jobStatusInput = z.strictObject({ machine: MachineRef, ...JobRef.shape });
export const jobStatus = defineTool({
  name: 'job_status',
  title: 'Job state',
  description: "A job's state (running, exited, killed, timed_out, stopped, lost), exit code and output size.",
  input: jobStatusInput,
  output: JobInfo,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  errors: jobCodes,
});

export const jobOutputInput = z.strictObject({ machine: MachineRef, ...JobOutputParams.shape });
export const jobOutput = defineTool({
  name: 'job_output',
  title: 'Read job output',
  description:
    "Reads one page of a job's output (stdout and stderr interleaved) from a byte offset; pass next_offset to read on. Pages end at a line break when they can. Known secret formats are masked.",
  input: jobOutputInput,
  output: z.object({
    job_id: z.string(),
    state: JobInfo.shape.state,
    offset: z.number().int(),
    next_offset: z.number().int(),
    data: z.string(),
    skipped_bytes: z.number().int(),
    output_bytes: z.number().int(),
    eof: z.boolean(),
    masked_count: z.number().int(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  errors: jobCodes,
});

export const jobStopInput = z.strictObject({ machine: MachineRef, ...JobRef.shape });
export const jobStop = defineTool({
  name: 'job_stop',
  title: 'Stop a job',
  description:
    'Ends a running job: SIGTERM to its whole process group, then SIGKILL after a grace period. Returns its final state. Stopping a job that already ended changes nothing.',
  input: jobStopInput,
  output: JobInfo,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  errors: jobCodes,
});

export const jobTools = [jobStart, jobStatus, jobOutput, jobStop] as const;
