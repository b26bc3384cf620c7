import { createHash, createPublicKey, randomBytes, verify, X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { gatewayProofText, type HandshakeTranscript, LetKiteError } from '@letkite/protocol';
import type { AgentState } from './state';

/** A fresh handshake nonce: 32 random bytes, base64url. */
export function newAgentNonce(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * True when `proof` is the pinned gateway key's signature over this connection's transcript. Any malformed key or
 * signature is simply "not proven".
 */
export function gatewayProofValid(pinnedKey: string, t: HandshakeTranscript, proof: string): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(pinnedKey, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ed25519') return false;
    return verify(null, Buffer.from(gatewayProofText(t)), key, Buffer.from(proof, 'base64'));
  } catch {
    return false;
  }
}

/** `SHA256:<base64>` of a gateway key (SPKI DER, base64): the form the gateway logs at start-up, to compare. */
export function gatewayKeyFingerprint(publicKey: string): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(publicKey, 'base64')).digest('base64').replace(/=+$/, '')}`;
}

/** SHA-256 of a TLS certificate's SubjectPublicKeyInfo, base64 (the HPKP `pin-sha256` form). */
export function certificatePin(cert: PeerCertificate): string {
  const spki = new X509Certificate(cert.raw).publicKey.export({ format: 'der', type: 'spki' });
  return createHash('sha256').update(spki).digest('base64');
}

/**
 * The pinned gateway key of a state, or a refusal for a state enrolled before pinning existed. There is no
 * trust-on-first-use: whoever answers first on the URL could be the attacker.
 */
export function pinnedGatewayKey(state: AgentState): string {
  if (state.gateway_public_key) return state.gateway_public_key;
  throw new LetKiteError(
    'unauthenticated',
    'this agent was enrolled without pinning the gateway identity (an older LetKite) and will not connect; ' +
      're-join with a new join token: letkite agent join <gateway-url> <token>',
  );
}

/**
 * For wss:// states: the certificate pin the agent saw at join. A state joined over https without one is refused,
 * like a state without a gateway key.
 */
export function pinnedCertificate(state: AgentState): string | null {
  if (new URL(state.gateway_url).protocol !== 'https:') return null;
  if (state.gateway_tls_pin) return state.gateway_tls_pin;
  throw new LetKiteError(
    'unauthenticated',
    'this agent has no pinned TLS certificate for its https gateway and will not connect; re-join: letkite agent join <gateway-url> <token>',
  );
}
