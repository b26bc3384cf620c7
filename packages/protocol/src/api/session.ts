import { z } from 'zod';
import { Id, OkResponse, Permission, Role } from './common';
import { endpoint } from './endpoint';

/** The signed-in person in the account their session works in. */
export const SessionUser = z.object({
  id: Id,
  name: z.string(),
  email: z.string().nullable(),
  role: Role,
  /** The custom role's name, when the membership has one. */
  custom_role: z.string().nullable(),
  permissions: z.array(Permission),
  account_id: Id,
});
export type SessionUser = z.infer<typeof SessionUser>;

/** `GET /api/session`: who is signed in (`user: null` when nobody), their accounts and the CSRF token for changes. */
export const SessionResponse = z.object({
  user: SessionUser.nullable(),
  accounts: z.array(z.object({ id: Id, name: z.string(), role: Role })).optional(),
  credentials: z
    .object({ passkeys: z.number().int().min(0), password: z.boolean(), recovery_codes_left: z.number().int().min(0) })
    .optional(),
  csrf_token: z.string().nullable().optional(),
});
export type SessionResponse = z.infer<typeof SessionResponse>;

export const SwitchAccountRequest = z.object({ account_id: Id });
export type SwitchAccountRequest = z.infer<typeof SwitchAccountRequest>;

/** WebAuthn options as `@simplewebauthn/server` makes them; the browser library reads them, nothing else does. */
export const WebAuthnOptions = z.looseObject({ challenge: z.string() });

/** A WebAuthn response from the browser, passed through to the gateway's verifier. */
export const WebAuthnResponse = z.looseObject({ id: z.string().min(1).max(1024) });

/** Step 1 of a passkey ceremony: a challenge id to send back and the options for the browser. */
export const PasskeyChallengeResponse = z.object({ challenge_id: Id, options: WebAuthnOptions });
export type PasskeyChallengeResponse = z.infer<typeof PasskeyChallengeResponse>;

export const PasskeySignInRequest = z.object({ challenge_id: Id, response: WebAuthnResponse });
export const PasswordSignInRequest = z.object({
  email: z.string().trim().min(3).max(254),
  password: z.string().min(1).max(256),
  /** A 6-digit authenticator code, or one recovery code. */
  code: z.string().trim().min(6).max(40),
});
export type PasswordSignInRequest = z.infer<typeof PasswordSignInRequest>;

/** What a one-time setup or invitation link is for (`POST /api/onboard/inspect`). */
export const OnboardingTicketView = z.object({
  kind: z.enum(['setup', 'invitation']),
  account_name: z.string(),
  role: z.string(),
  email: z.string().nullable(),
  existing_user: z.boolean(),
});
export type OnboardingTicketView = z.infer<typeof OnboardingTicketView>;

export const OnboardingToken = z.object({ token: z.string().min(1).max(200) });
const Person = { token: z.string().min(1).max(200), name: z.string().trim().min(1).max(100), email: z.string() };

/** A new authenticator secret to scan, and the challenge that binds the first code to it. */
export const TotpSetupResponse = z.object({ challenge_id: Id, secret: z.string().min(16), uri: z.string() });
export type TotpSetupResponse = z.infer<typeof TotpSetupResponse>;

/** Fresh recovery codes, shown once. */
export const RecoveryCodesResponse = z.object({ recovery_codes: z.array(z.string().min(1)).min(1) });
export type RecoveryCodesResponse = z.infer<typeof RecoveryCodesResponse>;

/** Sign-in, the session and one-time links. */
export const sessionEndpoints = {
  get: endpoint({ method: 'GET', path: '/api/session', response: SessionResponse }),
  switchAccount: endpoint({
    method: 'POST',
    path: '/api/session/account',
    request: SwitchAccountRequest,
    response: OkResponse,
  }),
  signOut: endpoint({ method: 'POST', path: '/api/auth/sign-out', response: OkResponse }),
  passkeyOptions: endpoint({ method: 'POST', path: '/api/auth/passkey/options', response: PasskeyChallengeResponse }),
  signInWithPasskey: endpoint({
    method: 'POST',
    path: '/api/auth/passkey',
    request: PasskeySignInRequest,
    response: OkResponse,
  }),
  signInWithPassword: endpoint({
    method: 'POST',
    path: '/api/auth/password',
    request: PasswordSignInRequest,
    response: OkResponse,
  }),
};

/** First-run owner setup and accepting an invitation. */
export const onboardingEndpoints = {
  inspect: endpoint({
    method: 'POST',
    path: '/api/onboard/inspect',
    request: OnboardingToken,
    response: OnboardingTicketView,
  }),
  passkeyOptions: endpoint({
    method: 'POST',
    path: '/api/onboard/passkey/options',
    request: z.object(Person),
    response: PasskeyChallengeResponse,
  }),
  completeWithPasskey: endpoint({
    method: 'POST',
    path: '/api/onboard/passkey',
    request: z.object({
      ...Person,
      challenge_id: Id,
      passkey_name: z.string().max(100).optional(),
      response: WebAuthnResponse,
    }),
    response: OkResponse,
  }),
  totp: endpoint({ method: 'POST', path: '/api/onboard/totp', request: OnboardingToken, response: TotpSetupResponse }),
  completeWithPassword: endpoint({
    method: 'POST',
    path: '/api/onboard/password',
    request: z.object({ ...Person, challenge_id: Id, password: z.string(), code: z.string() }),
    response: OkResponse.extend(RecoveryCodesResponse.shape),
  }),
  acceptInvitation: endpoint({
    method: 'POST',
    path: '/api/invitations/accept',
    request: OnboardingToken,
    response: OkResponse,
  }),
};
