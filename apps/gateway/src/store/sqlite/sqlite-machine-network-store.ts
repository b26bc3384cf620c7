import type { NetworkReport } from '@letkite/protocol';
import { eq } from 'drizzle-orm';
import type { MachineNetwork, MachineNetworkStore } from '../../wake/machine-network-store';
import { migrateSqliteDomain, type SqliteStore } from './sqlite-store';
import { machineNetwork } from './wake-schema';

function fromRow(r: typeof machineNetwork.$inferSelect): MachineNetwork {
  return {
    machineId: r.machineId,
    accountId: r.accountId,
    network: JSON.parse(r.network) as NetworkReport,
    reportedAt: r.reportedAt,
  };
}

/** The wake domain on the shared SQLite database (its own migrations stream, sqlite-wake). */
export class SqliteMachineNetworkStore implements MachineNetworkStore {
  private readonly db: SqliteStore['db'];

  constructor(core: SqliteStore) {
    this.db = core.db;
    migrateSqliteDomain(core.db, 'sqlite-wake', '__drizzle_migrations_wake');
  }

  async record(entry: MachineNetwork): Promise<void> {
    const row = { ...entry, network: JSON.stringify(entry.network) };
    this.db.insert(machineNetwork).values(row).onConflictDoUpdate({ target: machineNetwork.machineId, set: row }).run();
  }

  async get(machineId: string): Promise<MachineNetwork | null> {
    const r = this.db.select().from(machineNetwork).where(eq(machineNetwork.machineId, machineId)).get();
    return r ? fromRow(r) : null;
  }

  async forAccount(accountId: string): Promise<MachineNetwork[]> {
    return this.db
      .select()
      .from(machineNetwork)
      .where(eq(machineNetwork.accountId, accountId))
      .orderBy(machineNetwork.machineId)
      .all()
      .map(fromRow);
  }
}
