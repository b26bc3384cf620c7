import { copyBetweenHosts, LetKiteError, transferStart, transferStatus } from '@letkite/protocol';
import type { AgentHub } from '../../hub/types';
import { prepareTransfer } from '../../transfers/prepare-transfer';
import { type RelayProgress, relayTransfer } from '../../transfers/relay';
import { TransferRegistry } from '../../transfers/transfer-registry';
import { defineHandler } from '../tool-handler';

/**
 * One registry per gateway: keyed by the gateway's hub (built once per process by the composition root), so the
 * handlers stay static like every other tool and two gateways in one test process do not share transfers.
 */
const registries = new WeakMap<AgentHub, TransferRegistry>();
function registryFor(hub: AgentHub): TransferRegistry {
  let registry = registries.get(hub);
  if (!registry) {
    registry = new TransferRegistry();
    registries.set(hub, registry);
  }
  return registry;
}

/** MCP progress notifications at most this often. */
const PROGRESS_EVERY_MS = 500;

export const copyBetweenHostsHandler = defineHandler(copyBetweenHosts, async (input, ctx) => {
  const request = await prepareTransfer(ctx, input);
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
  return { ...result, duration_ms: Date.now() - started };
});

export const transferStartHandler = defineHandler(transferStart, async (input, ctx) => {
  const request = await prepareTransfer(ctx, input);
  const transferId = registryFor(ctx.deps.hub).start(ctx.principal.accountId, (progress, signal, onProgress) =>
    relayTransfer(ctx.deps.hub, request, progress, signal, onProgress),
  );
  ctx.audit.details = { ...ctx.audit.details, transfer_id: transferId };
  return { transfer_id: transferId };
});

export const transferStatusHandler = defineHandler(transferStatus, async (input, ctx) => {
  const status = registryFor(ctx.deps.hub).status(ctx.principal.accountId, input.transfer_id);
  if (!status) {
    throw new LetKiteError(
      'not_found',
      `no transfer "${input.transfer_id}" on this gateway (transfers do not survive a gateway restart)`,
    );
  }
  return status;
});
