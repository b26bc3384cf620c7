import {
  copyBetweenHosts,
  type copyBetweenHostsInput,
  LetKiteError,
  transferStart,
  transferStatus,
} from '@letkite/protocol';
import type { z } from 'zod';
import { machineSetTarget, policyToolReason, requireApproval } from '../../approvals/gate';
import type { AgentHub } from '../../hub/types';
import { resolveGrantPolicy } from '../../policy/resolve-policy';
import { prepareTransfer } from '../../transfers/prepare-transfer';
import { type RelayProgress, relayTransfer } from '../../transfers/relay';
import { TransferRegistry } from '../../transfers/transfer-registry';
import { defineHandler, outputMaskerFor, type ToolCallContext } from '../tool-handler';

/**
 * Both ends checked, then — when the policy lists the tool in `approval.tools` — one human approval for the copy,
 * bound to the pair of machines and the exact arguments. The agents then get `approved: true`.
 */
async function preparedAndApproved(
  ctx: ToolCallContext,
  tool: 'copy_between_hosts' | 'transfer_start',
  input: z.infer<typeof copyBetweenHostsInput>,
) {
  const request = await prepareTransfer(ctx, input);
  const policy = await resolveGrantPolicy(ctx.deps.policies, ctx.principal.accountId, ctx.principal.grant);
  const reason = policyToolReason(policy, tool);
  if (!reason) return request;
  const ends = await Promise.all(
    [request.source.machineId, request.destination.machineId].map(async (id) => ({
      id,
      name: (await ctx.deps.store.getMachine(id))?.name ?? id,
    })),
  );
  await requireApproval(ctx, { tool, machine: machineSetTarget(ends), policy, args: input, reason });
  return {
    ...request,
    source: { ...request.source, context: { ...request.source.context, approved: true, confirm: true } },
    destination: { ...request.destination, context: { ...request.destination.context, approved: true, confirm: true } },
  };
}

/**
 * One registry per gateway: keyed by the gateway's hub (built once per process by the composition root), so the
 * handlers stay static like every other tool and two gateways in one test process do not share running
 * transfers. Their status lives in the store, so every gateway answers transfer_status.
 */
const registries = new WeakMap<AgentHub, TransferRegistry>();
function registryFor(deps: ToolCallContext['deps']): TransferRegistry {
  let registry = registries.get(deps.hub);
  if (!registry) {
    registry = new TransferRegistry(deps.transfers, Date.now, deps.log);
    registries.set(deps.hub, registry);
  }
  return registry;
}

/** MCP progress notifications at most this often. */
const PROGRESS_EVERY_MS = 500;

export const copyBetweenHostsHandler = defineHandler(copyBetweenHosts, async (input, ctx) => {
  const request = await preparedAndApproved(ctx, 'copy_between_hosts', input);
  const started = Date.now();
  const progress: RelayProgress = { bytesDone: 0, filesDone: 0, bytesTotal: null, filesTotal: null };
  let lastReport = 0;
  const report = () => {
    const now = Date.now();
    if (now - lastReport < PROGRESS_EVERY_MS) return;
    lastReport = now;
    void ctx.progress(progress.bytesDone, progress.bytesTotal ?? undefined).catch(() => undefined);
  };
  const result = await relayTransfer(ctx.deps.hub, request, progress, ctx.signal, report);
  // Skipped entries and errors quote paths and what the machines said: masked like any other output.
  return (await outputMaskerFor(ctx)).maskValue({ ...result, duration_ms: Date.now() - started });
});

export const transferStartHandler = defineHandler(transferStart, async (input, ctx) => {
  const request = await preparedAndApproved(ctx, 'transfer_start', input);
  const transferId = await registryFor(ctx.deps).start(ctx.principal.accountId, (progress, signal, onProgress) =>
    relayTransfer(ctx.deps.hub, request, progress, signal, onProgress),
  );
  ctx.audit.details = { ...ctx.audit.details, transfer_id: transferId };
  return { transfer_id: transferId };
});

export const transferStatusHandler = defineHandler(transferStatus, async (input, ctx) => {
  const status = await registryFor(ctx.deps).status(ctx.principal.accountId, input.transfer_id);
  if (!status) {
    throw new LetKiteError('not_found', `no transfer "${input.transfer_id}" (finished transfers are kept for an hour)`);
  }
  return (await outputMaskerFor(ctx)).maskValue(status);
});
