import { z } from 'zod';
import { Id, OkResponse, Timestamp } from './common';
import { endpoint } from './endpoint';
import { PasskeyChallengeResponse, RecoveryCodesResponse, TotpSetupResponse, WebAuthnResponse } from './session';

/**
 * One of the signed-in person's passkeys, with its public halves so a machine's administrator can pin it as an
 * approver in `ceiling.toml` (DESIGN §6, §9).
 */
export const PasskeyView = z.object({
  id: Id,
  name: z.string(),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable(),
  backed_up: z.boolean(),
  /** COSE public key, base64url. */
  public_key: z.string().min(1),
  rp_id: z.string().min(1),
});
export type PasskeyView = z.infer<typeof PasskeyView>;

export const PasskeyListResponse = z.object({ passkeys: z.array(PasskeyView) });
export type PasskeyListResponse = z.infer<typeof PasskeyListResponse>;

export const AddPasskeyRequest = z.object({
  challenge_id: Id,
  name: z.string().trim().min(1).max(100).optional(),
  response: WebAuthnResponse,
});

export const sessionMethods = ['passkey', 'password_totp', 'recovery_code'] as const;
export const SessionMethod = z.enum(sessionMethods);

/** One of the person's signed-in web sessions. */
export const WebSessionView = z.object({
  id: Id,
  method: SessionMethod,
  user_agent: z.string().nullable(),
  created_at: Timestamp,
  last_seen_at: Timestamp,
  current: z.boolean(),
});
export type WebSessionView = z.infer<typeof WebSessionView>;

export const WebSessionListResponse = z.object({ sessions: z.array(WebSessionView) });
export type WebSessionListResponse = z.infer<typeof WebSessionListResponse>;

/** Revoking a session also closes the person's live MCP sessions; this many were closed. */
export const RevokeSessionResponse = z.object({ closed_mcp_sessions: z.number().int().min(0) });

export const SetPasswordRequest = z.object({ challenge_id: Id, password: z.string(), code: z.string() });
export type SetPasswordRequest = z.infer<typeof SetPasswordRequest>;

/** The person's own passkeys, password + TOTP and web sessions. */
export const securityEndpoints = {
  passkeys: endpoint({ method: 'GET', path: '/api/me/passkeys', response: PasskeyListResponse }),
  passkeyOptions: endpoint({ method: 'POST', path: '/api/me/passkeys/options', response: PasskeyChallengeResponse }),
  addPasskey: endpoint({
    method: 'POST',
    path: '/api/me/passkeys',
    request: AddPasskeyRequest,
    response: z.object({ id: Id, name: z.string() }),
  }),
  removePasskey: endpoint({ method: 'DELETE', path: '/api/me/passkeys/:id', response: OkResponse }),
  beginPassword: endpoint({ method: 'POST', path: '/api/me/password/totp', response: TotpSetupResponse }),
  setPassword: endpoint({
    method: 'POST',
    path: '/api/me/password',
    request: SetPasswordRequest,
    response: RecoveryCodesResponse,
  }),
  removePassword: endpoint({ method: 'DELETE', path: '/api/me/password', response: OkResponse }),
  regenerateRecoveryCodes: endpoint({
    method: 'POST',
    path: '/api/me/recovery-codes',
    request: z.object({ code: z.string() }),
    response: RecoveryCodesResponse,
  }),
  sessions: endpoint({ method: 'GET', path: '/api/me/sessions', response: WebSessionListResponse }),
  revokeSession: endpoint({ method: 'DELETE', path: '/api/me/sessions/:id', response: RevokeSessionResponse }),
};
