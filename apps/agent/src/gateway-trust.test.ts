import { generateKeyPairSync, sign } from 'node:crypto';
import { gatewayProofText, type HandshakeTranscript } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { gatewayProofValid, newAgentNonce, pinnedCertificate, pinnedGatewayKey } from './gateway-trust';
import type { AgentState } from './state';

const gateway = generateKeyPairSync('ed25519');
const pinned = gateway.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const t: HandshakeTranscript = {
  protocol: 2,
  machineId: 'mch_1',
  gatewayNonce: 'g'.repeat(43),
  agentNonce: 'a'.repeat(43),
};
const prove = (x: HandshakeTranscript, key = gateway.privateKey) =>
  sign(null, Buffer.from(gatewayProofText(x)), key).toString('base64');

const state = (extra: Partial<AgentState>): AgentState => ({
  gateway_url: 'http://localhost:8787/',
  machine_id: 'mch_1',
  name: 'box',
  private_key_pem: 'unused',
  insecure: false,
  ...extra,
});

describe('the gateway proof the agent checks', () => {
  test('a proof by the pinned key over this transcript is accepted', () => {
    expect(gatewayProofValid(pinned, t, prove(t))).toBe(true);
  });

  test.each([
    ['a proof over an earlier connection (replayed welcome)', prove({ ...t, agentNonce: 'o'.repeat(43) })],
    ['a proof for another machine', prove({ ...t, machineId: 'mch_2' })],
    ['a proof for another protocol', prove({ ...t, protocol: 1 })],
    ['a proof by another key (impostor)', prove(t, generateKeyPairSync('ed25519').privateKey)],
    ['an empty proof', ''],
    ['garbage', 'not base64 at all!'],
    ['a zero signature', Buffer.alloc(64).toString('base64')],
  ])('%s is refused', (_what, proof) => {
    expect(gatewayProofValid(pinned, t, proof)).toBe(false);
  });

  test('a malformed or non-Ed25519 pin proves nothing', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    expect(gatewayProofValid('garbage', t, prove(t))).toBe(false);
    expect(gatewayProofValid(rsa.export({ format: 'der', type: 'spki' }).toString('base64'), t, prove(t))).toBe(false);
  });

  test('every connection gets a fresh 32-byte nonce', () => {
    const a = newAgentNonce();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newAgentNonce()).not.toBe(a);
  });
});

describe('pins in the agent state', () => {
  test('a state without a pinned gateway key is refused (no trust on first use)', () => {
    expect(() => pinnedGatewayKey(state({}))).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
    expect(() => pinnedGatewayKey(state({}))).toThrow(/letkite agent join/);
    expect(pinnedGatewayKey(state({ gateway_public_key: pinned }))).toBe(pinned);
  });

  test('an https state needs a certificate pin; a plain one has none to check', () => {
    expect(pinnedCertificate(state({}))).toBeNull();
    expect(() => pinnedCertificate(state({ gateway_url: 'https://gw.example.com/' }))).toThrow(
      expect.objectContaining({ code: 'unauthenticated' }),
    );
    expect(pinnedCertificate(state({ gateway_url: 'https://gw.example.com/', gateway_tls_pin: 'pin' }))).toBe('pin');
  });
});
