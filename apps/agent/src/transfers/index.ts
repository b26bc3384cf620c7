/**
 * The agent's side of file transfers (DESIGN §7 transfer group): `transfer_send` streams a file or tree to the
 * gateway, `transfer_receive` writes one into place atomically. The stream and its credit flow control are
 * described in `@letkite/protocol` (ops-transfer.ts).
 */
import { LetKiteError, type RequestContext } from '@letkite/protocol';
import type { CeilingState } from '../ceiling/ceiling-source';
import { transferReceive } from './receive';
import { type StreamSide, transferSend } from './send';
import type { TempJournal } from './temp-journal';
import { transferAccess } from './transfer-access';

export { TempJournal } from './temp-journal';

export type TransferOpName = 'transfer_send' | 'transfer_receive';

/** Runs a transfer op after checking this machine allows transfers and building the request's file reach. */
export function runTransferOp(
  op: TransferOpName,
  params: unknown,
  context: RequestContext,
  ceiling: CeilingState,
  side: StreamSide,
  journal: TempJournal,
): Promise<unknown> {
  const access = transferAccess(context, ceiling);
  switch (op) {
    case 'transfer_send':
      return transferSend(params, access, side);
    case 'transfer_receive':
      return transferReceive(params, access, side, journal);
    default:
      throw new LetKiteError('unsupported', `unknown transfer op "${String(op)}"`);
  }
}
