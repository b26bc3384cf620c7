import { z } from 'zod';

/**
 * Stable error codes (DESIGN §8). Codes are API: add, never rename. Each surface (MCP, REST, agent protocol, CLI
 * exit codes) maps them once with a `Record<ErrorCode, …>` so a new code does not compile until it is mapped.
 */
export const errorCodes = [
  /** The input does not match the tool's or endpoint's schema, or a value is out of range. */
  'invalid_params',
  /** No credentials, or credentials that are unknown, expired or revoked. */
  'unauthenticated',
  /** The caller is known but its role, connection or scopes do not allow this. */
  'forbidden',
  /** No machine has the given id or name (or the caller may not know it exists). */
  'machine_not_found',
  /** A name matches several machines; `details.ids` lists them. */
  'ambiguous_machine',
  /** The machine is enrolled but its agent is not connected. */
  'machine_offline',
  /** The connection's policy (command rules, tool settings, file reach) refuses the call. */
  'blocked_by_policy',
  /** The machine's own ceiling.toml refuses the call (checked by the agent, whatever the gateway says). */
  'blocked_by_ceiling',
  /** A `confirm` verdict: the AI must show the person the exact command and resend with `confirm: true`. */
  'confirmation_required',
  /** The call waits for a human; `details.approval_id` names the request. */
  'approval_pending',
  /** A human denied this exact call; repeating it is refused without asking again. */
  'approval_denied',
  /** The approval request expired before anyone decided. */
  'approval_expired',
  /** The connection already has the maximum number of pending approval requests. */
  'too_many_pending_approvals',
  /** The thing named (file, job, token, session …) does not exist, or is hidden from the caller. */
  'not_found',
  /** A frame, file, read or write is over its size limit. */
  'too_large',
  /** The operation did not finish within its time limit. */
  'timeout',
  /** Too many requests or attempts in a window; retry later. */
  'rate_limited',
  /** The operation exists but not on this machine, platform or mode (e.g. terminals in allowlist mode). */
  'unsupported',
  /** The operation is part of the contract but this build does not implement it. */
  'not_implemented',
  /** A stored value changed since the caller read it (e.g. `if_sha256` mismatch). */
  'conflict',
  /** The join token is unknown, used or expired. */
  'invalid_token',
  /** The peer broke the wire protocol (malformed frame, unknown type, version mismatch). */
  'protocol_error',
  /** An unexpected failure on our side; details are logged, not returned. */
  'internal',
  /** The gateway's configuration is inconsistent (e.g. LETKITE_DATABASE_URL without LETKITE_NATS_URL); it does not start. */
  'invalid_config',
] as const;

export type ErrorCode = (typeof errorCodes)[number];
export const ErrorCode = z.enum(errorCodes);

/** The serialised form of an error, as it crosses any wire. */
export const ErrorPayload = z.object({
  code: ErrorCode,
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorPayload = z.infer<typeof ErrorPayload>;

/**
 * The one error type. `message` is for humans and quotes the bad value; `details` carries machine data. Never put
 * a secret in either.
 */
export class LetKiteError extends Error {
  override readonly name = 'LetKiteError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.details = details;
  }

  toPayload(): ErrorPayload {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }

  static fromPayload(payload: ErrorPayload): LetKiteError {
    return new LetKiteError(payload.code, payload.message, payload.details);
  }
}

/** Turns anything thrown into a LetKiteError; unknown failures become `internal` without leaking their text. */
export function toLetKiteError(err: unknown): LetKiteError {
  if (err instanceof LetKiteError) return err;
  return new LetKiteError('internal', 'internal error');
}

export function isLetKiteError(err: unknown, code?: ErrorCode): err is LetKiteError {
  return err instanceof LetKiteError && (code === undefined || err.code === code);
}
