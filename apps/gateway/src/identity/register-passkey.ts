import { randomBytes } from 'node:crypto';
import { LetKiteError } from '@letkite/protocol';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  RegistrationResponseJSON,
  VerifiedRegistrationResponse,
} from '@simplewebauthn/server';
import type { StoredPasskey } from './identity-store';
import { encodedChallenge, loadWebAuthn, type PasskeyDeps, relyingParty } from './verify-passkey';

/** How long a person has to answer a WebAuthn prompt. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

export function newChallenge(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Options for `startRegistration()`: a discoverable credential (so sign-in needs no user name) with user
 * verification required; the person's existing passkeys are excluded so one authenticator is not added twice.
 */
export async function passkeyRegistrationOptions(args: {
  userId: string;
  userName: string;
  displayName: string;
  challenge: string;
  deps: PasskeyDeps;
}): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const rp = relyingParty(args.deps.publicUrl);
  const existing = await args.deps.identity.listPasskeys(args.userId);
  const { generateRegistrationOptions } = await loadWebAuthn();
  return generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpID,
    userName: args.userName,
    userDisplayName: args.displayName,
    userID: new TextEncoder().encode(args.userId),
    challenge: args.challenge,
    attestationType: 'none',
    timeout: 120_000,
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
  });
}

/** Verifies a registration for `challenge`; returns the passkey to store, or `unauthenticated`. */
export async function verifyPasskeyRegistration(args: {
  userId: string;
  name: string;
  challenge: string;
  response: unknown;
  deps: PasskeyDeps;
}): Promise<StoredPasskey> {
  const rp = relyingParty(args.deps.publicUrl);
  const { verifyRegistrationResponse } = await loadWebAuthn();
  let result: VerifiedRegistrationResponse;
  try {
    result = await verifyRegistrationResponse({
      response: args.response as RegistrationResponseJSON,
      expectedChallenge: encodedChallenge(args.challenge),
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      requireUserVerification: true,
    });
  } catch (err) {
    throw new LetKiteError('unauthenticated', `the passkey could not be verified: ${(err as Error).message}`);
  }
  if (!result.verified || !result.registrationInfo.userVerified) {
    throw new LetKiteError('unauthenticated', 'the passkey could not be verified');
  }
  const { credential, credentialBackedUp } = result.registrationInfo;
  if (await args.deps.identity.getPasskey(credential.id)) {
    throw new LetKiteError('conflict', 'this passkey is already registered');
  }
  return {
    id: credential.id,
    userId: args.userId,
    name: args.name,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports ?? [],
    backedUp: credentialBackedUp,
    createdAt: args.deps.now().toISOString(),
    lastUsedAt: null,
  };
}
