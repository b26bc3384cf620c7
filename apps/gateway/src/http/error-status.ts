import type { ErrorCode } from '@letkite/protocol';

/** HTTP status for each error code on the REST surface. */
export const httpStatusOf: Record<ErrorCode, 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 501 | 502 | 503 | 504> = {
  invalid_params: 400,
  unauthenticated: 401,
  forbidden: 403,
  machine_not_found: 404,
  ambiguous_machine: 409,
  machine_offline: 503,
  blocked_by_policy: 403,
  blocked_by_ceiling: 403,
  confirmation_required: 409,
  approval_pending: 409,
  approval_denied: 403,
  approval_expired: 403,
  too_many_pending_approvals: 429,
  not_found: 404,
  too_large: 413,
  timeout: 504,
  rate_limited: 429,
  unsupported: 400,
  not_implemented: 501,
  conflict: 409,
  invalid_token: 401,
  protocol_error: 400,
  internal: 500,
  invalid_config: 500,
};
