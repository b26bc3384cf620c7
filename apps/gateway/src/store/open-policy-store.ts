import { LetKiteError } from '@letkite/protocol';
import type { PolicyStore } from './policy-store';
import { PgPolicyStore } from './postgres/pg-policy-store';
import { PgStore } from './postgres/pg-store';
import { SqlitePolicyStore } from './sqlite/sqlite-policy-store';
import { SqliteStore } from './sqlite/sqlite-store';
import type { Store } from './types';

/** The policies domain sharing the core store's database (and so its transactions and audit log). */
export function openPolicyStore(store: Store): PolicyStore {
  if (store instanceof SqliteStore) return new SqlitePolicyStore(store);
  if (store instanceof PgStore) return new PgPolicyStore(store.database);
  throw new LetKiteError('not_implemented', 'the policy store exists only for SQLite and PostgreSQL');
}
