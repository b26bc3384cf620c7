import { commandRefusal, judgeCommand } from '@letkite/ceiling';
import { ExecResult, exec, LetKiteError } from '@letkite/protocol';
import { commandRuleReason, policyToolReason, requireApproval } from '../../approvals/gate';
import { prepareMachineCall } from '../../machines/prepare-machine-call';
import { prepareForAi } from '../../output';
import { reportedCeiling } from '../../policy/resolve-policy';
import { defineHandler } from '../tool-handler';

/** The agent keeps at most this much of each stream (newest kept) before the gateway caps it for the AI. */
const AGENT_OUTPUT_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_S = 60;

export const execHandler = defineHandler(exec, async (input, ctx) => {
  if ((input.command === undefined) === (input.argv === undefined)) {
    throw new LetKiteError('invalid_params', 'give exactly one of "command" or "argv"');
  }
  const command = input.command ?? input.argv ?? [];
  ctx.audit.details = input.command !== undefined ? { command: input.command } : { argv: input.argv };
  const { machine, policy, clamped } = await prepareMachineCall(ctx, input.machine);

  // The gateway's check (the agent repeats it against the ceiling it really has).
  const judgement = judgeCommand(clamped, reportedCeiling(machine), command, { confirm: input.confirm ?? false });
  ctx.audit.decision = judgement.verdict;
  // deny and confirm refuse here; an `approve` verdict (or the policy's approval.tools) goes to the approval gate.
  const refusal = commandRefusal(judgement, true);
  if (refusal) throw refusal;
  const needsHuman = commandRuleReason(judgement) ?? policyToolReason(policy, 'exec');
  const approved = needsHuman
    ? (await requireApproval(ctx, { tool: 'exec', machine, policy, args: input, reason: needsHuman })).approved
    : false;

  const timeoutS = input.timeout_s ?? DEFAULT_TIMEOUT_S;
  const out: Record<'stdout' | 'stderr', string[]> = { stdout: [], stderr: [] };
  const raw = await ctx.deps.hub.call(
    machine.id,
    'exec',
    {
      command: input.command,
      argv: input.argv,
      cwd: input.cwd,
      env: input.env,
      stdin: input.stdin,
      timeout_ms: timeoutS * 1000,
      max_output_bytes: AGENT_OUTPUT_BYTES,
    },
    { policy, confirm: (input.confirm ?? false) || approved, approved, actor: ctx.principal.actor },
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
  const stdout = prepareForAi(out.stdout.join(''));
  const stderr = prepareForAi(out.stderr.join(''));
  return {
    ...result,
    stdout: stdout.text,
    stderr: stderr.text,
    truncated: result.truncated || stdout.truncated || stderr.truncated,
    masked_count: stdout.masked_count + stderr.masked_count,
  };
});
