import type { TransferStateName, TransferStatus } from './transfer-registry';

/** One transfer's row: the account, the state, the last `transfer_status` answer written, and when. */
export interface TransferRow {
  id: string;
  accountId: string;
  state: TransferStateName;
  status: TransferStatus;
  startedAt: string;
  updatedAt: string;
  endedAt: string | null;
}

/** Transfer status in the store, so any gateway answers `transfer_status` (the relaying gateway writes it). */
export interface TransferStore {
  /** Records a transfer that just started. */
  insert(row: TransferRow): Promise<void>;
  /** Writes the latest status (progress, or the outcome with `endedAt`). */
  update(id: string, row: Pick<TransferRow, 'state' | 'status' | 'updatedAt' | 'endedAt'>): Promise<void>;
  /** The transfer, if it belongs to this account. */
  get(accountId: string, id: string): Promise<TransferRow | null>;
  /** Deletes transfers that ended, or stopped being updated, before `before`; returns how many. */
  prune(before: string): Promise<number>;
}
