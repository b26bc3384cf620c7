import { LetKiteError } from '@letkite/protocol';
import { PgOAuthStore } from '../store/postgres/pg-oauth-store';
import { PgStore } from '../store/postgres/pg-store';
import { SqliteOAuthStore } from '../store/sqlite/sqlite-oauth-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { Store } from '../store/types';
import type { OAuthStore } from './oauth-store';

/** The OAuth store sharing the core store's database (and so its transactions and audit log). */
export function openOAuthStore(store: Store): OAuthStore {
  if (store instanceof SqliteStore) return new SqliteOAuthStore(store);
  if (store instanceof PgStore) return new PgOAuthStore(store.database);
  throw new LetKiteError('not_implemented', 'the OAuth store exists only for SQLite and PostgreSQL');
}
