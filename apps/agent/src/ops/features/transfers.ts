import { transferOps } from '@letkite/protocol/ops-transfer';
import { runTransferOp, type TransferOpName } from '../../transfers';
import type { TempJournal } from '../../transfers/temp-journal';
import type { Feature, FeatureDeps, OpHandler } from '../feature';

function transferOp<K extends TransferOpName>(journal: TempJournal): OpHandler<K> {
  return (r) => {
    const side = { id: r.id, send: r.send, stream: r.stream, signal: r.signal };
    return runTransferOp(r.op, r.params, r.context, r.ceiling, side, journal);
  };
}

/** File transfers, streamed through the gateway (the journal of unfinished ones is the agent's, from its start). */
export function transfersFeature({ transfers }: FeatureDeps): Feature<TransferOpName> {
  return {
    schemas: transferOps,
    handlers: { transfer_send: transferOp(transfers), transfer_receive: transferOp(transfers) },
  };
}
