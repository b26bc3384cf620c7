import type { ClampedPolicy } from '@letkite/ceiling';
import type { Policy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import { approvalProofContext } from '../../approvals/gate';
import { prepareMachineCall } from '../../machines/prepare-machine-call';
import type { Machine } from '../../store/types';
import type { ToolCallContext } from '../tool-handler';

/** Calls that touch state on the agent (sessions, jobs, terminals) answer quickly unless said otherwise. */
export const QUICK_OP_TIMEOUT_MS = 30_000;

export interface PreparedStatefulCall {
  machine: Machine;
  policy: Policy;
  clamped: ClampedPolicy;
  /** Sends the op to the machine's agent with the caller's policy and identity for the agent's own checks. */
  call: (
    op: string,
    params: unknown,
    options?: {
      timeoutMs?: number;
      confirm?: boolean;
      /** The caller has just used up a human approval of exactly this call (it also lifts `confirm`). */
      approved?: boolean;
      onChunk?: (stream: string, data: string) => void;
    },
  ) => Promise<unknown>;
}

/** Resolves the machine and the caller's clamped policy, and binds a hub call to them. */
export async function prepareStatefulCall(ctx: ToolCallContext, ref: string): Promise<PreparedStatefulCall> {
  const { machine, policy, clamped } = await prepareMachineCall(ctx, ref);
  return {
    machine,
    policy,
    clamped,
    call: (op, params, options = {}) =>
      ctx.deps.hub.call(
        machine.id,
        op,
        params,
        {
          policy,
          confirm: (options.confirm ?? false) || (options.approved ?? false),
          approved: options.approved ?? false,
          actor: ctx.principal.actor,
          ...approvalProofContext(ctx),
        },
        {
          timeoutMs: options.timeoutMs ?? QUICK_OP_TIMEOUT_MS,
          signal: ctx.signal,
          ...(options.onChunk ? { onChunk: options.onChunk } : {}),
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
