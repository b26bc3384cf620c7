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
