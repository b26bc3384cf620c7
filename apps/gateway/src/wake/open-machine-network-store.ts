import { LetKiteError } from '@letkite/protocol';
import { PgMachineNetworkStore } from '../store/postgres/pg-machine-network-store';
import { PgStore } from '../store/postgres/pg-store';
import { SqliteMachineNetworkStore } from '../store/sqlite/sqlite-machine-network-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { Store } from '../store/types';
import type { MachineNetworkStore } from './machine-network-store';

/** The wake domain's store on the core store's database. */
export function openMachineNetworkStore(store: Store): MachineNetworkStore {
  if (store instanceof SqliteStore) return new SqliteMachineNetworkStore(store);
  if (store instanceof PgStore) return new PgMachineNetworkStore(store.database);
  throw new LetKiteError('not_implemented', 'the machine network store exists only for SQLite and PostgreSQL');
}
