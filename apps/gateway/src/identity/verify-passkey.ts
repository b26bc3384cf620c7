import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { GatewayDeps } from '../deps';

// @simplewebauthn/server with its X.509 and ASN.1 parsers is the gateway's largest dependency (≈ 23 MiB of RSS):
// it loads with the first passkey prompt, not at start (bench/memory).
let webAuthn: Promise<typeof import('@simplewebauthn/server')> | undefined;
export function loadWebAuthn(): Promise<typeof import('@simplewebauthn/server')> {
  webAuthn ??= import('@simplewebauthn/server');
  return webAuthn;
}

/** What passkey checks need from the gateway's dependencies. */
export type PasskeyDeps = Pick<GatewayDeps, 'identity' | 'now' | 'publicUrl'>;

/** The WebAuthn relying party of this gateway: its host name and origin (from the public URL). */
export function relyingParty(publicUrl: string): { rpID: string; origin: string; rpName: string } {
  const url = new URL(publicUrl);
  return { rpID: url.hostname, origin: url.origin, rpName: 'LetKite' };
}

/** The challenge as the browser echoes it: base64url of the chosen string's UTF-8 bytes. */
export function encodedChallenge(challenge: string): string {
  return Buffer.from(challenge, 'utf8').toString('base64url');
}

/**
 * Options for `startAuthentication()` in the browser, for a challenge the caller chooses (sign-in uses a random
 * one; approvals bind it to one approval). Lists the person's passkeys; user verification is required.
 */
export async function passkeyAuthenticationOptions(args: {
  userId: string | null;
  challenge: string;
  deps: PasskeyDeps;
}): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const passkeys = args.userId === null ? [] : await args.deps.identity.listPasskeys(args.userId);
  const { generateAuthenticationOptions } = await loadWebAuthn();
  return generateAuthenticationOptions({
    rpID: relyingParty(args.deps.publicUrl).rpID,
    challenge: args.challenge,
    userVerification: 'required',
    timeout: 120_000,
    allowCredentials: passkeys.map((p) => ({ id: p.id, transports: p.transports })),
  });
}

/**
 * Verifies a passkey assertion by `userId` for `expectedChallenge` (the same string given to
 * `passkeyAuthenticationOptions`): the passkey must be theirs, the origin ours, the person verified, and the
 * signature counter must move forward (it is stored). Any failure is `false`, never an exception.
 */
export async function verifyPasskeyAssertion(args: {
  userId: string;
  expectedChallenge: string;
  /** The challenge exactly as the browser echoes it, when it was sent as raw bytes (bound approval challenges). */
  echoedChallenge?: string;
  response: unknown;
  deps: PasskeyDeps;
}): Promise<boolean> {
  const response = args.response as AuthenticationResponseJSON;
  if (typeof response !== 'object' || response === null || typeof response.id !== 'string') return false;
  const passkey = await args.deps.identity.getPasskey(response.id);
  if (!passkey || passkey.userId !== args.userId) return false;
  const rp = relyingParty(args.deps.publicUrl);
  const { verifyAuthenticationResponse } = await loadWebAuthn();
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: args.echoedChallenge ?? encodedChallenge(args.expectedChallenge),
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      requireUserVerification: true,
      credential: {
        id: passkey.id,
        publicKey: Buffer.from(passkey.publicKey, 'base64url'),
        counter: passkey.counter,
        transports: passkey.transports,
      },
    });
    if (!result.verified || !result.authenticationInfo.userVerified) return false;
    return await args.deps.identity.recordPasskeyUse(
      passkey.id,
      result.authenticationInfo.newCounter,
      args.deps.now().toISOString(),
    );
  } catch {
    return false;
  }
}
