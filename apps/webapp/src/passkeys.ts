import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { api } from './api';

type Options = Parameters<typeof startRegistration>[0]['optionsJSON'];
type AuthOptions = Parameters<typeof startAuthentication>[0]['optionsJSON'];

/** Creates a passkey: fetch options, let the browser make the credential, send it back. */
export async function registerPasskey(optionsPath: string, verifyPath: string, body: Record<string, unknown>) {
  const { challenge_id, options } = await api<{ challenge_id: string; options: Options }>('POST', optionsPath, body);
  const response = await startRegistration({ optionsJSON: options });
  return api('POST', verifyPath, { ...body, challenge_id, response });
}

/** Signs in with a passkey (discoverable: the browser offers the person's passkeys for this site). */
export async function signInWithPasskey() {
  const { challenge_id, options } = await api<{ challenge_id: string; options: AuthOptions }>(
    'POST',
    '/api/auth/passkey/options',
    {},
  );
  const response = await startAuthentication({ optionsJSON: options });
  return api('POST', '/api/auth/passkey', { challenge_id, response });
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
