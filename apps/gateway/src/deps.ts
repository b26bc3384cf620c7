import type { Approvals } from './approvals/approvals';
import type { Coordination } from './coordination/coordination';
import type { GatewayMetrics } from './http/metrics';
import type { GatewayIdentity } from './hub/gateway-identity';
import type { AgentHub } from './hub/types';
import type { IdentityStore } from './identity/identity-store';
import type { Mailer } from './notify/mailer';
import type { PolicyStore } from './store/policy-store';
import type { Store } from './store/types';
import type { TransferStore } from './transfers/transfer-store';
import type { TunnelRegistry } from './tunnels/tunnel-registry';
import type { MachineNetworkStore } from './wake/machine-network-store';

/** Everything the gateway's operations need, built once by the composition root (main.ts). */
export interface GatewayDeps {
  store: Store;
  /** People's credentials, web sessions, invitations, custom roles and groups. */
  identity: IdentityStore;
  /** The account's own policies (with every revision) and the account switches. */
  policies: PolicyStore;
  /** Background transfers' status, written by the relaying gateway and read by any (transfer_status). */
  transfers: TransferStore;
  /** Outgoing e-mail (invitations, approval requests). */
  mailer: Mailer;
  hub: AgentHub;
  /** Human approvals of single tool calls: their store, wake-up events and notifications. */
  approvals: Approvals;
  /** Events, rate limiters and leases shared by every gateway (in-process in embedded mode). */
  coordination: Coordination;
  now: () => Date;
  log: (msg: string) => void;
  /** The gateway's public base URL, e.g. http://localhost:8787 */
  publicUrl: string;
  version: string;
  /** The identity key agents pin at enrollment and check on every connect. */
  gatewayIdentity: GatewayIdentity;
  /** Prometheus counters and histograms (tool calls are counted in runTool); absent in tests that need none. */
  metrics?: GatewayMetrics;
  /** The tunnels this gateway process holds (tunnel_open, /t/<id>/, tcp listeners); absent: tunnels unsupported. */
  tunnels?: TunnelRegistry;
  /** Machines' reported interfaces for Wake-on-LAN (wake_node); absent: wake_node answers unsupported. */
  machineNetworks?: MachineNetworkStore;
}
