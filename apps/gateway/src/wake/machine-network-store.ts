import type { NetworkReport } from '@letkite/protocol';

/** A machine's interfaces as its agent last reported them (for Wake-on-LAN). */
export interface MachineNetwork {
  machineId: string;
  accountId: string;
  network: NetworkReport;
  reportedAt: string;
}

/**
 * The wake domain (issue #15): each machine's last reported interfaces (MACs, IPv4 subnets), written when its
 * agent connects, so `wake_node` knows a sleeping machine's MAC and which awake machine shares its network. Kept
 * out of the core `machines` table so the domain changes on its own (docs/design/store-domains.md).
 */
export interface MachineNetworkStore {
  /** Replaces the machine's report (an agent's connect). */
  record(entry: MachineNetwork): Promise<void>;
  get(machineId: string): Promise<MachineNetwork | null>;
  /** Every report of the account's machines. */
  forAccount(accountId: string): Promise<MachineNetwork[]>;
}
