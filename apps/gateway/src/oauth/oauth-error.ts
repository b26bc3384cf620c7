/**
 * Errors on the OAuth wire (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8707 §2). They are separate from LetKiteError:
 * OAuth clients understand only these codes, in `{ error, error_description }` bodies or redirect parameters.
 */
export const oauthErrorCodes = [
  /** A parameter is missing, repeated or malformed (including a missing or wrong PKCE challenge). */
  'invalid_request',
  /** The client_id is unknown, or the client tried an authentication method it does not have. */
  'invalid_client',
  /** The code or refresh token is unknown, expired, used, revoked, or bound to another client, redirect or verifier. */
  'invalid_grant',
  /** This client may not use this grant or response type. */
  'unauthorized_client',
  /** The token endpoint was asked for a grant type other than authorization_code or refresh_token. */
  'unsupported_grant_type',
  /** /authorize was asked for a response type other than `code`. */
  'unsupported_response_type',
  /** A refresh asked for scopes the connection was never given. */
  'invalid_scope',
  /** The person declined, or may not connect clients. */
  'access_denied',
  /** The `resource` is not this gateway's MCP endpoint. */
  'invalid_target',
  /** Registration: a redirect URI is not acceptable. */
  'invalid_redirect_uri',
  /** Registration: other metadata is not acceptable. */
  'invalid_client_metadata',
  /** Something failed on our side. */
  'server_error',
  /** Registration: too many from this address; `Retry-After` says when to try again (HTTP 429). */
  'rate_limited',
] as const;
export type OAuthErrorCode = (typeof oauthErrorCodes)[number];

export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status: 400 | 401 | 403 | 429 | 500 = error === 'invalid_client'
      ? 401
      : error === 'server_error'
        ? 500
        : error === 'rate_limited'
          ? 429
          : 400,
    /** Seconds to wait, sent as `Retry-After` (rate_limited). */
    readonly retryAfterS?: number,
  ) {
    super(description);
  }

  toBody(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}
