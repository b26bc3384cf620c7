import type { ClampedPolicy } from '@letkite/ceiling';
import type { Policy } from '@letkite/policy';
import { type AgentCallOp, type AgentOpParams, type AgentOpResult, LetKiteError } from '@letkite/protocol';
import { approvalProofContext } from '../approvals/gate';
import type { ToolCallContext } from '../mcp/tool-handler';
import { clampForMachine, resolveGrantPolicy } from '../policy/resolve-policy';
import { actorLabel } from '../services/actor';
import type { Machine } from '../store/types';
import { resolveMachine } from './resolve-machine';

/** Calls that touch state on the agent (sessions, jobs, terminals) answer quickly unless said otherwise. */
export const QUICK_OP_TIMEOUT_MS = 30_000;

/** How one op of a prepared call is sent. */
export interface MachineCallOptions {
  /** Default QUICK_OP_TIMEOUT_MS. */
  timeoutMs?: number;
  confirm?: boolean;
  /** The caller has just used up a human approval of exactly this call (it also lifts `confirm`). */
  approved?: boolean;
  onChunk?: (stream: string, data: string) => void;
}

/** A call on one machine after the gateway's common checks: the machine, the caller's policy, and a bound hub call. */
export interface MachineCall {
  machine: Machine;
  policy: Policy;
  clamped: ClampedPolicy;
  /**
   * Sends one op to the machine's agent with the caller's policy and identity for the agent's own checks, and the
   * approval proof when the call's approval was just used up (read at send time, so a gate passed after preparing
   * still counts).
   */
  call<K extends AgentCallOp>(op: K, params: AgentOpParams<K>, options?: MachineCallOptions): Promise<AgentOpResult<K>>;
}

/**
 * The common start of every call that reaches a machine: find it among those the caller may reach, make sure it
 * is online, and resolve the caller's policy clamped to the machine's reported ceiling. The machine becomes the
 * call's audit target unless `quiet` (exec_many checks each machine of a set and audits the set).
 */
export async function prepareMachineCall(
  ctx: ToolCallContext,
  ref: string,
  options: { quiet?: boolean } = {},
): Promise<MachineCall> {
  const machine = await resolveMachine(ctx.deps, ctx.principal, ref);
  if (!options.quiet) ctx.audit.target = machine.id;
  ctx.audit.machineIds ??= [];
  if (!ctx.audit.machineIds.includes(machine.id)) ctx.audit.machineIds.push(machine.id);
  if (!(await ctx.deps.hub.online([machine.id])).has(machine.id)) {
    throw new LetKiteError('machine_offline', `machine "${machine.name}" is offline`);
  }
  const policy = await resolveGrantPolicy(ctx.deps.policies, ctx.principal.accountId, ctx.principal.grant);
  return {
    machine,
    policy,
    clamped: clampForMachine(policy, machine),
    call: (op, params, callOptions = {}) =>
      ctx.deps.hub.call(
        machine.id,
        op,
        params,
        {
          policy,
          confirm: (callOptions.confirm ?? false) || (callOptions.approved ?? false),
          approved: callOptions.approved ?? false,
          actor: actorLabel(ctx.actor),
          ...approvalProofContext(ctx),
        },
        {
          timeoutMs: callOptions.timeoutMs ?? QUICK_OP_TIMEOUT_MS,
          signal: ctx.signal,
          ...(callOptions.onChunk ? { onChunk: callOptions.onChunk } : {}),
        },
      ),
  };
}

/** Shell sessions and terminals need shell mode: allowlist mode has no shell at all (DESIGN §4). */
export function refuseInAllowlistMode(clamped: ClampedPolicy, what: string): void {
  if (clamped.commands.mode === 'allowlist') {
    throw new LetKiteError('unsupported', `${what} do not exist in allowlist mode`, { layer: 'allowlist' });
  }
}
