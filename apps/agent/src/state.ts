import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * What `letkite agent join` leaves behind: where the gateway is, who we are, our private key, and the gateway
 * identity we pinned (docs/design/agent-trust.md).
 */
export const AgentState = z.object({
  gateway_url: z.string().url(),
  machine_id: z.string().min(1),
  name: z.string().min(1),
  /** Ed25519 private key, PKCS#8 PEM. The file is 0600 in a 0700 directory. */
  private_key_pem: z.string().min(1),
  /** Allow plain ws:// to a non-loopback gateway (DESIGN §9: only with an explicit flag). */
  insecure: z.boolean().default(false),
  /**
   * The gateway's Ed25519 identity key (SPKI DER, base64) pinned at join; every welcome must be signed by it.
   * Optional only so that a state from before pinning still parses: such a state refuses to connect.
   */
  gateway_public_key: z.string().min(1).optional(),
  /** For an https gateway: SHA-256 (base64) of the TLS certificate's public key seen at join. */
  gateway_tls_pin: z.string().min(1).optional(),
  /**
   * Cluster mode: the other gateways of the cluster, as the last welcome named them. On a reconnect the agent tries
   * them in turn after `gateway_url`; each must still prove `gateway_public_key` (connection.ts gatewayCandidates).
   */
  gateways: z.array(z.string().url().max(2048)).max(16).optional(),
});
export type AgentState = z.infer<typeof AgentState>;

export const STATE_FILE = 'agent.json';

export function saveState(stateDir: string, state: AgentState): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  chmodSync(stateDir, 0o700);
  const file = join(stateDir, STATE_FILE);
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

export function loadState(stateDir: string): AgentState | null {
  let text: string;
  try {
    text = readFileSync(join(stateDir, STATE_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return AgentState.parse(JSON.parse(text));
}
