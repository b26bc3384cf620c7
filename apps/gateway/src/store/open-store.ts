import { PgStore } from './postgres/pg-store';
import { SqliteStore } from './sqlite/sqlite-store';
import type { Store } from './types';

/** True for a location that names a PostgreSQL database (cluster mode) rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * Picks the store implementation for a location: a SQLite file path, or (cluster mode) a postgres:// URL. The
 * PostgreSQL store connects and applies every domain's migrations before it resolves; a failure names the URL
 * without its password (redactDatabaseUrl).
 */
export async function openStore(location: string): Promise<Store> {
  if (isPostgresUrl(location)) return PgStore.open(location);
  return new SqliteStore(location);
}
