import type { ClampedPolicy } from '@letkite/ceiling';
import type { Policy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import type { ToolCallContext } from '../mcp/tool-handler';
import { clampForMachine, resolveGrantPolicy } from '../policy/resolve-policy';
import type { Machine } from '../store/types';
import { resolveMachine } from './resolve-machine';

export interface MachineCall {
  machine: Machine;
  policy: Policy;
  clamped: ClampedPolicy;
}

/**
 * The common start of every call that reaches a machine: find it among those the caller may reach, make sure it
 * is online, and resolve the caller's policy clamped to the machine's reported ceiling.
 */
export async function prepareMachineCall(ctx: ToolCallContext, ref: string): Promise<MachineCall> {
  const machine = await resolveMachine(ctx.deps, ctx.principal, ref);
  ctx.audit.target = machine.id;
  if (!ctx.deps.hub.isOnline(machine.id)) {
    throw new LetKiteError('machine_offline', `machine "${machine.name}" is offline`);
  }
  const policy = resolveGrantPolicy(ctx.principal.grant);
  return { machine, policy, clamped: clampForMachine(policy, machine) };
}
