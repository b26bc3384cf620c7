import { index, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * The wake domain (issue #15; wake/machine-network-store.ts): each machine's interfaces as its agent last reported
 * them on connect, for Wake-on-LAN. One row per machine.
 */
export const machineNetwork = sqliteTable(
  'machine_network',
  {
    machineId: text('machine_id').primaryKey(),
    accountId: text('account_id').notNull(),
    /** The agent's report as JSON: [{ name, mac, ipv4: [{ address, prefix }] }]. */
    network: text('network').notNull(),
    reportedAt: text('reported_at').notNull(),
  },
  (t) => [index('machine_network_account').on(t.accountId)],
);
