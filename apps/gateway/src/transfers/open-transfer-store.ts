import { LetKiteError } from '@letkite/protocol';
import { PgStore } from '../store/postgres/pg-store';
import { PgTransferStore } from '../store/postgres/pg-transfer-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { SqliteTransferStore } from '../store/sqlite/sqlite-transfer-store';
import type { Store } from '../store/types';
import type { TransferStore } from './transfer-store';

/** The transfer store on the core store's database. */
export function openTransferStore(store: Store): TransferStore {
  if (store instanceof SqliteStore) return new SqliteTransferStore(store);
  if (store instanceof PgStore) return new PgTransferStore(store.database);
  throw new LetKiteError('not_implemented', 'the transfer store exists only for SQLite and PostgreSQL');
}
