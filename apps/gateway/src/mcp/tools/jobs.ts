import { commandRefusal, judgeCommand } from '@letkite/ceiling';
import { JobInfo, JobOutputResult, jobOutput, jobStart, jobStatus, jobStop, LetKiteError } from '@letkite/protocol';
import { approveIfNeeded } from '../../approvals/gate';
import { maskSecrets } from '../../output';
import { refuseUnreachableCwd } from '../../policy/check-cwd';
import { reportedCeiling } from '../../policy/resolve-policy';
import { defineHandler } from '../tool-handler';
import { prepareStatefulCall } from './stateful-call';

const DEFAULT_JOB_TIMEOUT_S = 24 * 3600;
/** job_stop waits for SIGTERM, the grace period and SIGKILL. */
const STOP_TIMEOUT_MS = 20_000;

/** Masks what a job record can carry back from the machine (the note may quote the helper's stderr). */
function maskInfo(info: JobInfo): JobInfo {
  return { ...info, note: info.note === null ? null : maskSecrets(info.note).text };
}

/** `job_start`: judged like exec on both sides; the agent answers as soon as the process is started. */
export const jobStartHandler = defineHandler(jobStart, async (input, ctx) => {
  if ((input.command === undefined) === (input.argv === undefined)) {
    throw new LetKiteError('invalid_params', 'give exactly one of "command" or "argv"');
  }
  const command = input.command ?? input.argv ?? [];
  ctx.audit.details = input.command !== undefined ? { command: input.command } : { argv: input.argv };
  const m = await prepareStatefulCall(ctx, input.machine);
  refuseUnreachableCwd(m.policy, m.clamped, input.cwd);
  const judgement = judgeCommand(m.clamped, reportedCeiling(m.machine), command, {
    confirm: input.confirm ?? false,
    env: input.env,
  });
  ctx.audit.decision = judgement.verdict;
  // deny and confirm refuse here; an `approve` verdict (or the policy's approval.tools) goes to the approval gate.
  const refusal = commandRefusal(judgement, true);
  if (refusal) throw refusal;
  const approved = await approveIfNeeded(ctx, {
    tool: 'job_start',
    machine: m.machine,
    policy: m.policy,
    args: input,
    judgement: judgement,
  });
  const info = JobInfo.parse(
    await m.call(
      'job_start',
      {
        command: input.command,
        argv: input.argv,
        cwd: input.cwd,
        env: input.env,
        timeout_ms: (input.timeout_s ?? DEFAULT_JOB_TIMEOUT_S) * 1000,
      },
      { confirm: input.confirm ?? false, approved },
    ),
  );
  ctx.audit.details = { ...ctx.audit.details, job_id: info.job_id };
  return maskInfo(info);
});

export const jobStatusHandler = defineHandler(jobStatus, async (input, ctx) => {
  ctx.audit.details = { job_id: input.job_id };
  const m = await prepareStatefulCall(ctx, input.machine);
  return maskInfo(JobInfo.parse(await m.call('job_status', { job_id: input.job_id })));
});

/**
 * `job_output`: one page, masked. Pages end at line breaks (the agent cuts them there), so a secret on one line
 * is never split between two pages; a private key block cut by a page is masked from either side.
 */
export const jobOutputHandler = defineHandler(jobOutput, async (input, ctx) => {
  ctx.audit.details = { job_id: input.job_id, offset: input.offset };
  const m = await prepareStatefulCall(ctx, input.machine);
  const { machine: _machine, ...params } = input;
  const page = JobOutputResult.parse(await m.call('job_output', params));
  const masked = maskSecrets(page.data);
  return { ...page, data: masked.text, masked_count: masked.masked_count };
});

export const jobStopHandler = defineHandler(jobStop, async (input, ctx) => {
  ctx.audit.details = { job_id: input.job_id };
  const m = await prepareStatefulCall(ctx, input.machine);
  return maskInfo(JobInfo.parse(await m.call('job_stop', { job_id: input.job_id }, { timeoutMs: STOP_TIMEOUT_MS })));
});
