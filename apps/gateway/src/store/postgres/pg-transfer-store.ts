import { and, eq, isNotNull, lt, or } from 'drizzle-orm';
import type { TransferStateName, TransferStatus } from '../../transfers/transfer-registry';
import type { TransferRow, TransferStore } from '../../transfers/transfer-store';
import type { PgDatabase, PgDb } from './pg-database';
import { transfers } from './transfers-schema';

/**
 * The transfers domain on PostgreSQL (cluster mode; migrations `pg-transfers`). Only the relaying gateway writes a
 * transfer's row, so no write races another; every gateway reads it for `transfer_status`.
 */
export class PgTransferStore implements TransferStore {
  private readonly db: PgDb;

  constructor(database: PgDatabase) {
    this.db = database.db;
  }

  async insert(row: TransferRow): Promise<void> {
    await this.db.insert(transfers).values({ ...row, status: JSON.stringify(row.status) });
  }

  async update(id: string, row: Pick<TransferRow, 'state' | 'status' | 'updatedAt' | 'endedAt'>): Promise<void> {
    await this.db
      .update(transfers)
      .set({ ...row, status: JSON.stringify(row.status) })
      .where(eq(transfers.id, id));
  }

  async get(accountId: string, id: string): Promise<TransferRow | null> {
    const [r] = await this.db
      .select()
      .from(transfers)
      .where(and(eq(transfers.id, id), eq(transfers.accountId, accountId)));
    if (!r) return null;
    return { ...r, state: r.state as TransferStateName, status: JSON.parse(r.status) as TransferStatus };
  }

  async prune(before: string): Promise<number> {
    const pruned = await this.db
      .delete(transfers)
      .where(or(and(isNotNull(transfers.endedAt), lt(transfers.endedAt, before)), lt(transfers.updatedAt, before)))
      .returning({ id: transfers.id });
    return pruned.length;
  }
}
