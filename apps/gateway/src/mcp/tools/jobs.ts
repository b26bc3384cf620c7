import { JobInfo, JobOutputResult, jobOutput, jobStart, jobStatus, jobStop } from '@letkite/protocol';
import { judgeAndGate } from '../../commands/judge-and-gate';
import { type MachineCall, prepareMachineCall } from '../../machines/prepare-machine-call';
import { maskCutStart, type OutputMasker } from '../../output';
import { defineHandler, outputMaskerFor } from '../tool-handler';

const DEFAULT_JOB_TIMEOUT_S = 24 * 3600;
/** job_stop waits for SIGTERM, the grace period and SIGKILL. */
const STOP_TIMEOUT_MS = 20_000;

/** Masks what a job record can carry back from the machine (the note may quote the helper's stderr). */
function maskInfo(info: JobInfo, masker: OutputMasker): JobInfo {
  return { ...info, note: info.note === null ? null : masker.mask(info.note).text };
}

/** `job_start`: judged and gated like exec on both sides; the agent answers as soon as the process is started. */
export const jobStartHandler = defineHandler(jobStart, async (input, ctx) => {
  ctx.audit.details = input.command !== undefined ? { command: input.command } : { argv: input.argv };
  const params = {
    command: input.command,
    argv: input.argv,
    cwd: input.cwd,
    env: input.env,
    timeout_ms: (input.timeout_s ?? DEFAULT_JOB_TIMEOUT_S) * 1000,
  };
  const request = {
    command: input.command ?? input.argv ?? [],
    cwd: input.cwd,
    env: input.env,
    confirm: input.confirm ?? false,
  };
  const m = await judgeAndGate(ctx, input.machine, request, { tool: 'job_start', args: input, params });
  const info = JobInfo.parse(
    await m.call('job_start', params, { confirm: input.confirm ?? false, approved: m.approved }),
  );
  ctx.audit.details = { ...ctx.audit.details, job_id: info.job_id };
  return maskInfo(info, await outputMaskerFor(ctx));
});

export const jobStatusHandler = defineHandler(jobStatus, async (input, ctx) => {
  ctx.audit.details = { job_id: input.job_id };
  const m = await prepareMachineCall(ctx, input.machine);
  return maskInfo(JobInfo.parse(await m.call('job_status', { job_id: input.job_id })), await outputMaskerFor(ctx));
});

/** Output read on each side of a job_output page, so a secret the page's edge cuts through is seen whole. */
const PAGE_MARGIN_BYTES = 8192;
/** The agent ends pages at line breaks: reaching a page's start from the margin before it may take a few pages. */
const MAX_MARGIN_PAGES = 8;

/** The output just before `offset` (up to PAGE_MARGIN_BYTES, contiguous with it), or '' when it cannot be had. */
async function outputBefore(m: MachineCall, jobId: string, offset: number): Promise<string> {
  let from = Math.max(0, offset - PAGE_MARGIN_BYTES);
  let text = '';
  for (let i = 0; i < MAX_MARGIN_PAGES && from < offset; i++) {
    const page = JobOutputResult.parse(
      await m.call('job_output', { job_id: jobId, offset: from, size: offset - from }),
    );
    if (page.offset !== from) text = '';
    if (page.next_offset <= page.offset || page.next_offset > offset) return '';
    text += page.data;
    from = page.next_offset;
  }
  return from === offset ? text : '';
}

/**
 * `job_output`: one page, masked together with the output around it (a margin read from the agent and dropped
 * again), so a secret that a page's edge cuts through — a long line, a wrapped token, a key block — shows as `***`
 * on both pages. The offsets stay the agent's.
 */
export const jobOutputHandler = defineHandler(jobOutput, async (input, ctx) => {
  ctx.audit.details = { job_id: input.job_id, offset: input.offset };
  const m = await prepareMachineCall(ctx, input.machine);
  const { machine: _machine, ...params } = input;
  const page = JobOutputResult.parse(await m.call('job_output', params));
  const before = page.offset > 0 && page.data !== '' ? await outputBefore(m, input.job_id, page.offset) : '';
  let after = '';
  if (page.data !== '' && page.next_offset < page.output_bytes) {
    const next = JobOutputResult.parse(
      await m.call('job_output', { job_id: input.job_id, offset: page.next_offset, size: PAGE_MARGIN_BYTES }),
    );
    if (next.offset === page.next_offset) after = next.data;
  }
  const masker = await outputMaskerFor(ctx);
  const cutAtStart = page.offset - Buffer.byteLength(before) > 0;
  const text = `${before}${page.data}${after}`;
  const masked = masker.window(text, before.length, before.length + page.data.length, { cutAtStart });
  // A page that starts where the log dropped its oldest bytes has nothing before it: its first word may be the
  // tail of a secret.
  const dropped = page.offset > 0 && before === '' && page.data !== '';
  const cut = dropped ? maskCutStart(masked.text) : { text: masked.text, masked_count: 0 };
  return { ...page, data: cut.text, masked_count: masked.masked_count + cut.masked_count };
});

export const jobStopHandler = defineHandler(jobStop, async (input, ctx) => {
  ctx.audit.details = { job_id: input.job_id };
  const m = await prepareMachineCall(ctx, input.machine);
  const info = JobInfo.parse(await m.call('job_stop', { job_id: input.job_id }, { timeoutMs: STOP_TIMEOUT_MS }));
  return maskInfo(info, await outputMaskerFor(ctx));
});
