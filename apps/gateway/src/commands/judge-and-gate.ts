import { type CommandJudgement, commandRefusal, judgeCommand } from '@letkite/ceiling';
import type { AgentOpParams } from '@letkite/protocol';
import { approveIfNeeded } from '../approvals/gate';
import { type MachineCall, prepareMachineCall, refuseInAllowlistMode } from '../machines/prepare-machine-call';
import type { ToolCallContext } from '../mcp/tool-handler';
import { refuseUnreachableCwd } from '../policy/check-cwd';
import { reportedCeiling } from '../policy/resolve-policy';

/** The tools that run a judged command, each as the agent op of the same name. */
export type CommandTool = 'exec' | 'job_start' | 'shell_run';

/** One command as the gateway judges it before any agent sees it. */
export interface CommandRequest {
  /** A command line (judged as shell text) or an argv (judged as one program and its arguments). */
  command: string | string[];
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
  stdin?: string | undefined;
  confirm: boolean;
  /** What needs a shell (shell sessions): refused in allowlist mode, which has none. */
  needsShell?: string;
}

/** A command on one machine the gateway's checks let through: its verdict is `allow` or `approve`. */
export interface JudgedCommand extends MachineCall {
  judgement: CommandJudgement;
}

/**
 * The gateway's checks of one command on one machine (DESIGN §4–§6): resolve the machine (reachable, online), the
 * caller's policy clamped to the machine's reported ceiling, the working directory, then judge the command against
 * that with the ceiling's own rules. `deny` and `confirm` verdicts throw here (`blocked_by_*`,
 * `confirmation_required`); an `approve` verdict is returned for the approval gate. The agent repeats all of this
 * against the ceiling it really has. `quiet` leaves the call's audit notes alone (exec_many judges each machine of
 * a set and audits the set).
 */
export async function judgeCommandOn(
  ctx: ToolCallContext,
  ref: string,
  request: CommandRequest,
  options: { quiet?: boolean } = {},
): Promise<JudgedCommand> {
  const prepared = await prepareMachineCall(ctx, ref, options);
  if (request.needsShell !== undefined) refuseInAllowlistMode(prepared.clamped, request.needsShell);
  refuseUnreachableCwd(prepared.policy, prepared.clamped, request.cwd);
  const judgement = judgeCommand(prepared.clamped, reportedCeiling(prepared.machine), request.command, {
    confirm: request.confirm,
    env: request.env,
    stdin: request.stdin,
  });
  if (!options.quiet) {
    ctx.audit.decision = judgement.verdict;
    ctx.audit.reasons = judgement.reasons;
  }
  const refusal = commandRefusal(judgement, true);
  if (refusal) throw refusal;
  return { ...prepared, judgement };
}

/** A judged command past the approval gate. */
export interface GatedCommand extends JudgedCommand {
  /** An approval of exactly this call was just used up: the agent gets `approved: true` (false when none was needed). */
  approved: boolean;
}

/**
 * The sequence every command tool runs (REVIEW §3-2): resolve → judge with the machine's reported ceiling →
 * refuse → approval gate. A human is needed when the verdict is `approve` or the policy lists the tool under
 * `approval.tools`; the approval binds the tool, the machine, `args` (the validated tool input) and exactly the
 * agent request `params` that will be sent. Throws the pending answer, `approval_denied` … like the gate.
 */
export async function judgeAndGate<T extends CommandTool>(
  ctx: ToolCallContext,
  ref: string,
  request: CommandRequest,
  gate: { tool: T; args: Record<string, unknown>; params: AgentOpParams<T> },
): Promise<GatedCommand> {
  const judged = await judgeCommandOn(ctx, ref, request);
  const approved = await approveIfNeeded(ctx, {
    tool: gate.tool,
    machine: judged.machine,
    policy: judged.policy,
    args: gate.args,
    judgement: judged.judgement,
    agent: { op: gate.tool, params: gate.params, machines: [judged.machine] },
  });
  return { ...judged, approved };
}
