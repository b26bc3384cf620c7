import type { Endpoint, EndpointInput, PasskeyChallengeResponse } from '@letkite/protocol/api';
import { sessionEndpoints } from '@letkite/protocol/api';
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import type { z } from 'zod';
import { call } from './api';

type Options = Parameters<typeof startRegistration>[0]['optionsJSON'];
type AuthOptions = Parameters<typeof startAuthentication>[0]['optionsJSON'];

/** An endpoint that starts a passkey ceremony: it answers a challenge id and the browser's options. */
type CeremonyStart = Endpoint<string, z.ZodType | undefined, typeof PasskeyChallengeResponse>;

/**
 * Creates a passkey: fetch options from `start`, let the browser make the credential, send it to `finish` with
 * `body`. The options are the gateway's `@simplewebauthn/server` output, passed to the browser library as they are.
 */
export async function registerPasskey<S extends CeremonyStart, F extends Endpoint>(
  start: S,
  finish: F,
  body: Record<string, unknown>,
) {
  const { challenge_id, options } = await call(start, body as EndpointInput<S>);
  const response = await startRegistration({ optionsJSON: options as unknown as Options });
  return call(finish, { ...body, challenge_id, response } as unknown as EndpointInput<F>);
}

/** Signs in with a passkey (discoverable: the browser offers the person's passkeys for this site). */
export async function signInWithPasskey() {
  const { challenge_id, options } = await call(sessionEndpoints.passkeyOptions);
  const response = await startAuthentication({ optionsJSON: options as unknown as AuthOptions });
  return call(sessionEndpoints.signInWithPasskey, { challenge_id, response: { ...response } });
}

/** A passkey's public halves, as `GET /api/me/passkeys` lists them. */
export interface PasskeyPublicKey {
  id: string;
  public_key: string;
  rp_id: string;
}

/**
 * The `approvers` entry that pins this passkey in a machine's ceiling.toml (packages/ceiling/README.md), so the
 * machine accepts approvals signed by it. JSON string escapes are valid TOML basic-string escapes.
 */
export function approverTomlEntry(name: string, passkey: PasskeyPublicKey): string {
  const text = (s: string) => JSON.stringify(s).replace(/\x7f/g, '\\u007f');
  return `{ name = ${text(name)}, credential_id = ${text(passkey.id)}, public_key = ${text(passkey.public_key)}, rp_id = ${text(passkey.rp_id)} }`;
}
