import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { MachineNetwork, MachineNetworkStore } from '../../wake/machine-network-store';
import { PgMachineNetworkStore } from '../postgres/pg-machine-network-store';
import { SqliteMachineNetworkStore } from '../sqlite/sqlite-machine-network-store';
import { type TwoInstances, twoInstanceBackends } from './two-instance-backends';

const backends = twoInstanceBackends<MachineNetworkStore>({
  sqlite: (core) => new SqliteMachineNetworkStore(core),
  postgres: (database) => new PgMachineNetworkStore(database),
  truncate: ['machine_network'],
});

const report = (machineId: string, accountId: string, address: string, at: string): MachineNetwork => ({
  machineId,
  accountId,
  network: [{ name: 'eth0', mac: '52:54:00:00:00:01', ipv4: [{ address, prefix: 24 }] }],
  reportedAt: at,
});

/** Two store instances on one database: whichever gateway the agent connects to records, any reads. */
describe.each(backends)('MachineNetworkStore on $name', (backend) => {
  let t: TwoInstances<MachineNetworkStore>;
  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    t = await backend.open();
  });
  afterEach(() => backend.close());

  test('a report recorded through one instance is read through the other, and a new connect replaces it', async () => {
    await t.a.record(report('mch_1', 'acc_1', '10.0.0.2', '2026-12-01T10:00:00.000Z'));
    expect(await t.b.get('mch_1')).toEqual(report('mch_1', 'acc_1', '10.0.0.2', '2026-12-01T10:00:00.000Z'));
    await t.b.record(report('mch_1', 'acc_1', '192.168.1.7', '2026-12-01T11:00:00.000Z'));
    expect((await t.a.get('mch_1'))?.network[0]?.ipv4).toEqual([{ address: '192.168.1.7', prefix: 24 }]);
    expect(await t.a.get('mch_unknown')).toBeNull();
  });

  test("an account's reports are its own machines' only", async () => {
    await t.a.record(report('mch_b', 'acc_1', '10.0.0.3', '2026-12-01T10:00:00.000Z'));
    await t.a.record(report('mch_a', 'acc_1', '10.0.0.2', '2026-12-01T10:00:00.000Z'));
    await t.a.record(report('mch_x', 'acc_2', '10.0.0.4', '2026-12-01T10:00:00.000Z'));
    expect((await t.b.forAccount('acc_1')).map((r) => r.machineId)).toEqual(['mch_a', 'mch_b']);
  });

  test('two connects recording at once leave one row', async () => {
    await Promise.all([
      t.a.record(report('mch_r', 'acc_1', '10.0.0.2', '2026-12-01T10:00:00.000Z')),
      t.b.record(report('mch_r', 'acc_1', '10.0.0.9', '2026-12-01T10:00:01.000Z')),
    ]);
    expect(await t.a.forAccount('acc_1')).toHaveLength(1);
  });
});
