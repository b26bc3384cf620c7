import { commandRefusal, judgeCommand } from '@letkite/ceiling';
import { ShellRunResult, shellRun } from '@letkite/protocol';
import { approveIfNeeded } from '../../approvals/gate';
import { reportedCeiling } from '../../policy/resolve-policy';
import { defineHandler, outputMaskerFor } from '../tool-handler';
import { prepareStatefulCall, refuseInAllowlistMode } from './stateful-call';

const AGENT_OUTPUT_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_S = 60;
/** Starting a session (and, sandboxed, probing the sandbox) may take this long on top of the command. */
const SESSION_START_MS = 20_000;

/** `shell_run`: judged like exec on both sides, then run in the caller's persistent session on the agent. */
export const shellRunHandler = defineHandler(shellRun, async (input, ctx) => {
  ctx.audit.details = { command: input.command, ...(input.session_id ? { session_id: input.session_id } : {}) };
  const m = await prepareStatefulCall(ctx, input.machine);
  refuseInAllowlistMode(m.clamped, 'shell sessions');
  const judgement = judgeCommand(m.clamped, reportedCeiling(m.machine), input.command, {
    confirm: input.confirm ?? false,
  });
  ctx.audit.decision = judgement.verdict;
  ctx.audit.reasons = judgement.reasons;
  // deny and confirm refuse here; an `approve` verdict (or the policy's approval.tools) goes to the approval gate.
  const refusal = commandRefusal(judgement, true);
  if (refusal) throw refusal;
  const timeoutS = input.timeout_s ?? DEFAULT_TIMEOUT_S;
  const params = {
    session_id: input.session_id,
    command: input.command,
    timeout_ms: timeoutS * 1000,
    max_output_bytes: AGENT_OUTPUT_BYTES,
  };
  const approved = await approveIfNeeded(ctx, {
    tool: 'shell_run',
    machine: m.machine,
    policy: m.policy,
    args: input,
    judgement: judgement,
    agent: { op: 'shell_run', params, machines: [m.machine] },
  });
  const out: Record<'stdout' | 'stderr', string[]> = { stdout: [], stderr: [] };
  const raw = await m.call('shell_run', params, {
    confirm: input.confirm ?? false,
    approved,
    timeoutMs: timeoutS * 1000 + SESSION_START_MS,
    onChunk: (stream, data) => {
      if (stream === 'stdout' || stream === 'stderr') out[stream].push(data);
    },
  });
  const result = ShellRunResult.parse(raw);
  const masker = await outputMaskerFor(ctx);
  const stdout = masker.prepare(out.stdout.join(''));
  const stderr = masker.prepare(out.stderr.join(''));
  const cwd = result.cwd === null ? null : masker.prepare(result.cwd, { maxLines: 1, maxChars: 4096 }).text;
  return {
    ...result,
    cwd,
    stdout: stdout.text,
    stderr: stderr.text,
    truncated: result.truncated || stdout.truncated || stderr.truncated,
    masked_count: stdout.masked_count + stderr.masked_count,
  };
});
