import { LetKiteError } from '@letkite/protocol';
import { PgIdentityStore } from '../store/postgres/pg-identity-store';
import { PgStore } from '../store/postgres/pg-store';
import { SqliteIdentityStore } from '../store/sqlite/sqlite-identity-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { Store } from '../store/types';
import type { IdentityStore } from './identity-store';
import { TotpSeedCipher } from './totp-seed-cipher';

/**
 * The identity store sharing the core store's database (and so its transactions and audit log). With the
 * gateway's secret key (main.ts), TOTP seeds are sealed at rest (on SQLite, plaintext ones from before are sealed
 * now; PostgreSQL never held any).
 */
export function openIdentityStore(store: Store, options: { secretKey?: Buffer } = {}): IdentityStore {
  const seeds = options.secretKey ? new TotpSeedCipher(options.secretKey) : null;
  if (store instanceof SqliteStore) return new SqliteIdentityStore(store, seeds);
  if (store instanceof PgStore) return new PgIdentityStore(store.database, seeds);
  throw new LetKiteError('not_implemented', 'the identity store exists only for SQLite and PostgreSQL');
}
