import { LetKiteError } from '@letkite/protocol';
import { SqliteStore } from './sqlite/sqlite-store';
import type { Store } from './types';

/** Picks the store implementation for a location: a SQLite file path, or (cluster mode) a postgres:// URL. */
export function openStore(location: string): Store {
  if (/^postgres(ql)?:\/\//.test(location)) {
    throw new LetKiteError('not_implemented', 'the PostgreSQL store (cluster mode) is not available in this build');
  }
  return new SqliteStore(location);
}
