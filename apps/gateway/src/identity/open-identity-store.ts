import { LetKiteError } from '@letkite/protocol';
import { SqliteIdentityStore } from '../store/sqlite/sqlite-identity-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { Store } from '../store/types';
import type { IdentityStore } from './identity-store';

/** The identity store sharing the core store's database (and so its transactions and audit log). */
export function openIdentityStore(store: Store): IdentityStore {
  if (store instanceof SqliteStore) return new SqliteIdentityStore(store);
  throw new LetKiteError('not_implemented', 'the identity store exists only for SQLite in this build');
}
