import type { AgentHub } from './hub/types';
import type { Store } from './store/types';

/** Everything the gateway's operations need, built once by the composition root (main.ts). */
export interface GatewayDeps {
  store: Store;
  hub: AgentHub;
  now: () => Date;
  log: (msg: string) => void;
  /** The gateway's public base URL, e.g. http://localhost:8787 */
  publicUrl: string;
  version: string;
}
