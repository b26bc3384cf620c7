import { type copyBetweenHostsInput, LetKiteError } from '@letkite/protocol';
import type { z } from 'zod';
import { checkPath } from '../files/check-path';
import { prepareMachineCall } from '../machines/prepare-machine-call';
import type { ToolCallContext } from '../mcp/tool-handler';
import type { RelayRequest, TransferEnd } from './relay';

type CopyInput = z.infer<typeof copyBetweenHostsInput>;

/**
 * The gateway's check of one end: the machine is reachable and online, its reported ceiling allows transfers, and
 * the caller's policy (clamped to that ceiling) can see the path, and for the destination write it. The agent
 * checks again against its real ceiling; this refuses early and gives the same answers (hidden looks missing).
 */
async function prepareEnd(
  ctx: ToolCallContext,
  end: { machine: string; path: string },
  mode: 'read' | 'write',
  confirm: boolean,
): Promise<TransferEnd> {
  const prepared = await prepareMachineCall(ctx, end.machine);
  const { machine, policy } = prepared;
  if (!prepared.clamped.transfers) {
    throw new LetKiteError('blocked_by_ceiling', `machine "${machine.name}" does not allow file transfers`, {
      layer: 'ceiling',
      key: 'transfers',
      machine: machine.id,
    });
  }
  checkPath(prepared, end.path, mode);
  return { machineId: machine.id, path: end.path, context: { policy, confirm, actor: ctx.principal.actor } };
}

/** Checks both ends of a copy and builds the relay request. */
export async function prepareTransfer(ctx: ToolCallContext, input: CopyInput): Promise<RelayRequest> {
  ctx.audit.details = {
    source: { machine: input.source.machine, path: input.source.path },
    destination: { machine: input.destination.machine, path: input.destination.path },
    overwrite: input.overwrite ?? false,
  };
  const confirm = input.confirm ?? false;
  const source = await prepareEnd(ctx, input.source, 'read', confirm);
  const destination = await prepareEnd(ctx, input.destination, 'write', confirm);
  ctx.audit.decision = 'allow';
  return {
    source,
    destination,
    overwrite: input.overwrite ?? false,
    includeHidden: input.include_hidden ?? false,
  };
}
