import { layeredFileAccess } from '@letkite/policy';
import { type copyBetweenHostsInput, LetKiteError } from '@letkite/protocol';
import type { z } from 'zod';
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
  const { machine, policy, clamped } = await prepareMachineCall(ctx, end.machine);
  if (!clamped.transfers) {
    throw new LetKiteError('blocked_by_ceiling', `machine "${machine.name}" does not allow file transfers`, {
      layer: 'ceiling',
      key: 'transfers',
      machine: machine.id,
    });
  }
  // `~` in a rule means the run-as account's home, which only the agent knows: then the agent alone decides.
  const patterns = [...clamped.file_layers.flat().map((r) => r.path), ...clamped.deny];
  if (end.path.startsWith('/') && !patterns.some((p) => p.startsWith('~'))) {
    const access = layeredFileAccess(end.path, { layers: clamped.file_layers, deny: clamped.deny, home: '/' });
    if (access === 'none') throw new LetKiteError('not_found', `no such file: "${end.path}"`);
    if (mode === 'write' && access === 'ro') {
      throw new LetKiteError('blocked_by_policy', `"${end.path}" is read-only for this connection`, {
        layer: 'policy',
      });
    }
  }
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
