import { type CommandJudgement, commandRefusal, judgeCommand } from '@letkite/ceiling';
import type { Policy } from '@letkite/policy';
import { ExecResult, exec, LetKiteError } from '@letkite/protocol';
import type { z } from 'zod';
import { approvalProofContext, approveIfNeeded } from '../../approvals/gate';
import { type MachineCall, prepareMachineCall } from '../../machines/prepare-machine-call';
import { refuseUnreachableCwd } from '../../policy/check-cwd';
import { reportedCeiling } from '../../policy/resolve-policy';
import type { Machine } from '../../store/types';
import { defineHandler, outputMaskerFor, type ToolCallContext } from '../tool-handler';

/** The agent keeps at most this much of each stream (newest kept) before the gateway caps it for the AI. */
const AGENT_OUTPUT_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_S = 60;

type ExecInput = z.infer<typeof exec.input>;
/** What exec runs on one machine: the exec input without the machine. */
export type ExecCommand = Omit<ExecInput, 'machine'>;

/**
 * The gateway's checks of one exec on one machine: resolve it (online), judge the command against the caller's
 * policy clamped to the machine's reported ceiling (the agent repeats this against the ceiling it really has).
 * `deny` and `confirm` verdicts throw here; an `approve` verdict is returned for the approval gate.
 */
export async function checkExec(
  ctx: ToolCallContext,
  input: ExecCommand,
  ref: string,
): Promise<MachineCall & { judgement: CommandJudgement }> {
  if ((input.command === undefined) === (input.argv === undefined)) {
    throw new LetKiteError('invalid_params', 'give exactly one of "command" or "argv"');
  }
  const command = input.command ?? input.argv ?? [];
  const prepared = await prepareMachineCall(ctx, ref);
  refuseUnreachableCwd(prepared.policy, prepared.clamped, input.cwd);
  const judgement = judgeCommand(prepared.clamped, reportedCeiling(prepared.machine), command, {
    confirm: input.confirm ?? false,
    env: input.env,
    stdin: input.stdin,
  });
  ctx.audit.decision = judgement.verdict;
  ctx.audit.reasons = judgement.reasons;
  const refusal = commandRefusal(judgement, true);
  if (refusal) throw refusal;
  return { ...prepared, judgement };
}

/** The exec request the agent gets for this input (also exactly what an approval of it binds). */
export function execAgentParams(input: ExecCommand): Record<string, unknown> {
  return {
    command: input.command,
    argv: input.argv,
    cwd: input.cwd,
    env: input.env,
    stdin: input.stdin,
    timeout_ms: (input.timeout_s ?? DEFAULT_TIMEOUT_S) * 1000,
    max_output_bytes: AGENT_OUTPUT_BYTES,
  };
}

/** Runs a checked exec on its machine; `approved` only when the caller has just used up a human approval. */
export async function runExec(
  ctx: ToolCallContext,
  input: ExecCommand,
  call: { machine: Machine; policy: Policy },
  approved: boolean,
): Promise<z.infer<typeof exec.output>> {
  const timeoutS = input.timeout_s ?? DEFAULT_TIMEOUT_S;
  const out: Record<'stdout' | 'stderr', string[]> = { stdout: [], stderr: [] };
  const raw = await ctx.deps.hub.call(
    call.machine.id,
    'exec',
    execAgentParams(input),
    {
      policy: call.policy,
      confirm: (input.confirm ?? false) || approved,
      approved,
      actor: ctx.principal.actor,
      ...approvalProofContext(ctx),
    },
    {
      // The agent enforces the command's own timeout; this one only guards against an agent that never answers.
      timeoutMs: timeoutS * 1000 + 15_000,
      signal: ctx.signal,
      onChunk: (stream, data) => {
        if (stream === 'stdout' || stream === 'stderr') out[stream].push(data);
      },
    },
  );
  const result = ExecResult.parse(raw);
  const masker = await outputMaskerFor(ctx);
  const stdout = masker.prepare(out.stdout.join(''));
  const stderr = masker.prepare(out.stderr.join(''));
  return {
    ...result,
    stdout: stdout.text,
    stderr: stderr.text,
    truncated: result.truncated || stdout.truncated || stderr.truncated,
    masked_count: stdout.masked_count + stderr.masked_count,
  };
}

export const execHandler = defineHandler(exec, async (input, ctx) => {
  ctx.audit.details = input.command !== undefined ? { command: input.command } : { argv: input.argv };
  const { machine: ref, ...command } = input;
  const checked = await checkExec(ctx, command, ref);
  // deny and confirm refused above; an `approve` verdict (or the policy's approval.tools) goes to the gate.
  const approved = await approveIfNeeded(ctx, {
    tool: 'exec',
    machine: checked.machine,
    policy: checked.policy,
    args: input,
    judgement: checked.judgement,
    agent: { op: 'exec', params: execAgentParams(command), machines: [checked.machine] },
  });
  return runExec(ctx, command, checked, approved);
});
