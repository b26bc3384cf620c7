import type { NetworkReport } from '@letkite/protocol';
import { eq } from 'drizzle-orm';
import type { MachineNetwork, MachineNetworkStore } from '../../wake/machine-network-store';
import type { PgDatabase, PgDb } from './pg-database';
import { machineNetwork } from './wake-schema';

function fromRow(r: typeof machineNetwork.$inferSelect): MachineNetwork {
  return {
    machineId: r.machineId,
    accountId: r.accountId,
    network: JSON.parse(r.network) as NetworkReport,
    reportedAt: r.reportedAt,
  };
}

/**
 * The wake domain on PostgreSQL (cluster mode; migrations `pg-wake`). Only a machine's own connect writes its
 * row; an upsert against the primary key, so two gateways the agent reconnects between leave the latest report.
 */
export class PgMachineNetworkStore implements MachineNetworkStore {
  private readonly db: PgDb;

  constructor(database: PgDatabase) {
    this.db = database.db;
  }

  async record(entry: MachineNetwork): Promise<void> {
    const row = { ...entry, network: JSON.stringify(entry.network) };
    await this.db.insert(machineNetwork).values(row).onConflictDoUpdate({ target: machineNetwork.machineId, set: row });
  }

  async get(machineId: string): Promise<MachineNetwork | null> {
    const [r] = await this.db.select().from(machineNetwork).where(eq(machineNetwork.machineId, machineId));
    return r ? fromRow(r) : null;
  }

  async forAccount(accountId: string): Promise<MachineNetwork[]> {
    const rows = await this.db
      .select()
      .from(machineNetwork)
      .where(eq(machineNetwork.accountId, accountId))
      .orderBy(machineNetwork.machineId);
    return rows.map(fromRow);
  }
}
