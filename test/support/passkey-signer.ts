import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { type ApprovalBinding, type ApprovalProof, approvalBinding, approvalChallenge } from '@letkite/protocol';

/**
 * A passkey held by the test itself: it signs WebAuthn assertions exactly as an authenticator does
 * (authenticatorData ‖ SHA-256(clientDataJSON)), so tests can make good proofs and every kind of forged one.
 */
export class TestPasskey {
  readonly credentialId = randomBytes(16).toString('base64url');

  private constructor(
    readonly alg: 'ES256' | 'EdDSA',
    readonly privateKey: KeyObject,
    /** The COSE public key, base64url: what a ceiling pins. */
    readonly publicKeyCose: string,
  ) {}

  static create(alg: 'ES256' | 'EdDSA' = 'ES256'): TestPasskey {
    if (alg === 'EdDSA') {
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const x = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
      // {1: 1 (OKP), 3: -8 (EdDSA), -1: 6 (Ed25519), -2: x}
      const cose = Buffer.concat([Buffer.from([0xa4, 0x01, 0x01, 0x03, 0x27, 0x20, 0x06, 0x21, 0x58, 0x20]), x]);
      return new TestPasskey(alg, privateKey, cose.toString('base64url'));
    }
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    // {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}
    const cose = Buffer.concat([
      Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
      Buffer.from(jwk.x ?? '', 'base64url'),
      Buffer.from([0x22, 0x58, 0x20]),
      Buffer.from(jwk.y ?? '', 'base64url'),
    ]);
    return new TestPasskey(alg, privateKey, cose.toString('base64url'));
  }

  /** The PKCS#8 private key (base64), for a CDP virtual authenticator's `addCredential`. */
  get pkcs8Base64(): string {
    return this.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
  }

  /** The TOML entry that pins this passkey in a ceiling. */
  approverToml(name: string, rpId = 'localhost'): string {
    return `{ name = ${JSON.stringify(name)}, credential_id = "${this.credentialId}", public_key = "${this.publicKeyCose}", rp_id = "${rpId}" }`;
  }

  /** An assertion over `challenge`, with knobs to forge each part. */
  assert(
    challenge: string,
    options: { rpId?: string; origin?: string; type?: string; flags?: number; credentialId?: string } = {},
  ): ApprovalProof['assertion'] {
    const rpId = options.rpId ?? 'localhost';
    const clientData = Buffer.from(
      JSON.stringify({
        type: options.type ?? 'webauthn.get',
        challenge,
        origin: options.origin ?? `http://${rpId}:8787`,
        crossOrigin: false,
      }),
    );
    const authData = Buffer.concat([
      createHash('sha256').update(rpId).digest(),
      Buffer.from([options.flags ?? 0x05]),
      Buffer.from([0, 0, 0, 1]),
    ]);
    const signed = Buffer.concat([authData, createHash('sha256').update(clientData).digest()]);
    const signature = sign(this.alg === 'EdDSA' ? null : 'sha256', signed, this.privateKey);
    return {
      credential_id: options.credentialId ?? this.credentialId,
      authenticator_data: authData.toString('base64url'),
      client_data_json: clientData.toString('base64url'),
      signature: signature.toString('base64url'),
    };
  }

  /** A proof signed by this passkey for a binding. */
  prove(binding: ApprovalBinding, options: Parameters<TestPasskey['assert']>[1] = {}): ApprovalProof {
    return { binding, assertion: this.assert(approvalChallenge(binding), options) };
  }
}

/** A binding for one request on one machine (defaults: exec, 10 minutes from now). */
export function bindingFor(args: {
  machineId: string;
  op: string;
  params: unknown;
  policy: unknown;
  tool?: string;
  approvalId?: string;
  expiresAt?: Date;
  others?: { machineId: string; op: string; params: unknown }[];
}): ApprovalBinding {
  return approvalBinding({
    approvalId: args.approvalId ?? `apr_${randomBytes(16).toString('hex')}`,
    tool: args.tool ?? args.op,
    policy: args.policy,
    expiresAt: (args.expiresAt ?? new Date(Date.now() + 10 * 60_000)).toISOString(),
    targets: [{ machineId: args.machineId, op: args.op, params: args.params }, ...(args.others ?? [])],
  });
}
