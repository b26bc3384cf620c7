import { and, eq, isNotNull, lt, or } from 'drizzle-orm';
import type { TransferStateName, TransferStatus } from '../../transfers/transfer-registry';
import type { TransferRow, TransferStore } from '../../transfers/transfer-store';
import { migrateSqliteDomain, type SqliteStore } from './sqlite-store';
import { transfers } from './transfers-schema';

/** The transfers domain on the shared SQLite database (its own migrations stream, sqlite-transfers). */
export class SqliteTransferStore implements TransferStore {
  private readonly db: SqliteStore['db'];

  constructor(core: SqliteStore) {
    this.db = core.db;
    migrateSqliteDomain(core.db, 'sqlite-transfers', '__drizzle_migrations_transfers');
  }

  async insert(row: TransferRow): Promise<void> {
    this.db
      .insert(transfers)
      .values({ ...row, status: JSON.stringify(row.status) })
      .run();
  }

  async update(id: string, row: Pick<TransferRow, 'state' | 'status' | 'updatedAt' | 'endedAt'>): Promise<void> {
    this.db
      .update(transfers)
      .set({ ...row, status: JSON.stringify(row.status) })
      .where(eq(transfers.id, id))
      .run();
  }

  async get(accountId: string, id: string): Promise<TransferRow | null> {
    const r = this.db
      .select()
      .from(transfers)
      .where(and(eq(transfers.id, id), eq(transfers.accountId, accountId)))
      .get();
    if (!r) return null;
    return { ...r, state: r.state as TransferStateName, status: JSON.parse(r.status) as TransferStatus };
  }

  async prune(before: string): Promise<number> {
    return this.db
      .delete(transfers)
      .where(or(and(isNotNull(transfers.endedAt), lt(transfers.endedAt, before)), lt(transfers.updatedAt, before)))
      .run().changes;
  }
}
