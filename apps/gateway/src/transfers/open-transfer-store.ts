import { LetKiteError } from '@letkite/protocol';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { SqliteTransferStore } from '../store/sqlite/sqlite-transfer-store';
import type { Store } from '../store/types';
import type { TransferStore } from './transfer-store';

/** The transfer store on the core store's database. */
export function openTransferStore(store: Store): TransferStore {
  if (store instanceof SqliteStore) return new SqliteTransferStore(store);
  throw new LetKiteError('not_implemented', 'the transfer store exists only for SQLite in this build');
}
