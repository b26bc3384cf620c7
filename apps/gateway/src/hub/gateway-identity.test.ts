import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentAuthText, gatewayProofText, type HandshakeTranscript } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { GATEWAY_IDENTITY_FILE, loadGatewayIdentity } from './gateway-identity';

const dir = () => mkdtempSync(join(tmpdir(), 'letkite-gw-identity-'));
const transcript: HandshakeTranscript = {
  protocol: 2,
  machineId: 'mch_1',
  gatewayNonce: 'g'.repeat(43),
  agentNonce: 'a'.repeat(43),
};

function proofValid(publicKey: string, t: HandshakeTranscript, proof: string): boolean {
  const key = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
  return verify(null, Buffer.from(gatewayProofText(t)), key, Buffer.from(proof, 'base64'));
}

describe('the gateway identity key', () => {
  test('is created once as a 0600 file in a 0700 directory and the same key is loaded afterwards', () => {
    const file = join(dir(), 'data', GATEWAY_IDENTITY_FILE);
    const first = loadGatewayIdentity(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    const again = loadGatewayIdentity(file);
    expect(again.publicKey).toBe(first.publicKey);
    expect(again.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(readFileSync(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });

  test('a key file others can read is refused, not used and not replaced', () => {
    const file = join(dir(), GATEWAY_IDENTITY_FILE);
    loadGatewayIdentity(file);
    const before = readFileSync(file, 'utf8');
    chmodSync(file, 0o644);
    expect(() => loadGatewayIdentity(file)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  test('a corrupt or non-Ed25519 key file fails closed instead of being replaced', () => {
    const file = join(dir(), GATEWAY_IDENTITY_FILE);
    writeFileSync(file, 'garbage', { mode: 0o600 });
    expect(() => loadGatewayIdentity(file)).toThrow(expect.objectContaining({ code: 'internal' }));
    expect(readFileSync(file, 'utf8')).toBe('garbage');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    writeFileSync(file, rsa.export({ format: 'pem', type: 'pkcs8' }).toString(), { mode: 0o600 });
    expect(() => loadGatewayIdentity(file)).toThrow(expect.objectContaining({ code: 'internal' }));
  });

  test('its handshake proof verifies for exactly the transcript it signed', () => {
    const id = loadGatewayIdentity(join(dir(), GATEWAY_IDENTITY_FILE));
    const proof = id.proveHandshake(transcript);
    expect(proofValid(id.publicKey, transcript, proof)).toBe(true);
    // Another connection (another nonce on either side), machine or protocol: the old proof is worthless.
    for (const changed of [
      { ...transcript, agentNonce: 'b'.repeat(43) },
      { ...transcript, gatewayNonce: 'h'.repeat(43) },
      { ...transcript, machineId: 'mch_2' },
      { ...transcript, protocol: 1 },
    ]) {
      expect(proofValid(id.publicKey, changed, proof)).toBe(false);
    }
    // Another gateway's key does not verify.
    const other = loadGatewayIdentity(join(dir(), GATEWAY_IDENTITY_FILE));
    expect(proofValid(other.publicKey, transcript, proof)).toBe(false);
  });

  test("the agent's auth text and the gateway's proof text differ, so neither signature reflects as the other", () => {
    expect(agentAuthText(transcript)).not.toBe(gatewayProofText(transcript));
    // Even with one key signing both roles, an agent-auth signature is no gateway proof.
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const agentSig = sign(null, Buffer.from(agentAuthText(transcript)), privateKey).toString('base64');
    const pub = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    expect(proofValid(pub, transcript, agentSig)).toBe(false);
  });

  test('field boundaries are unambiguous: a machine id cannot absorb part of a nonce', () => {
    const a = gatewayProofText({ ...transcript, machineId: 'a:b', gatewayNonce: 'c' });
    const b = gatewayProofText({ ...transcript, machineId: 'a', gatewayNonce: 'b:c' });
    expect(a).not.toBe(b);
  });
});
