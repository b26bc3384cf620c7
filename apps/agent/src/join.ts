import { generateKeyPairSync } from 'node:crypto';
import { EnrollResponse, ErrorPayload, LetKiteError } from '@letkite/protocol';
import { agentInfo } from './agent-info';
import { checkGatewayUrl } from './gateway-url';
import { type AgentState, saveState } from './state';

/**
 * Enrolls this machine: makes an Ed25519 key pair, spends the join token on it at the gateway, and saves the
 * state. The private key never leaves the machine; the join token travels in the request body, never in a URL.
 */
export async function joinGateway(input: {
  gatewayUrl: string;
  joinToken: string;
  stateDir: string;
  name?: string;
  insecure?: boolean;
}): Promise<AgentState> {
  const gateway = checkGatewayUrl(input.gatewayUrl, input.insecure ?? false);
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const res = await fetch(new URL('/agent/v1/enroll', gateway), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      join_token: input.joinToken,
      public_key: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      info: agentInfo(),
      ...(input.name ? { name: input.name } : {}),
    }),
  });
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const err = ErrorPayload.safeParse((body as { error?: unknown } | null)?.error);
    if (err.success) throw LetKiteError.fromPayload(err.data);
    throw new LetKiteError('internal', `enrollment failed with HTTP ${res.status}`);
  }
  const enrolled = EnrollResponse.parse(body);
  const state: AgentState = {
    gateway_url: gateway.toString(),
    machine_id: enrolled.machine_id,
    name: enrolled.name,
    private_key_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    insecure: input.insecure ?? false,
  };
  saveState(input.stateDir, state);
  return state;
}
