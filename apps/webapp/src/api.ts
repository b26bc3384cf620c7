/** The gateway's REST API as the web app uses it: same-origin fetch with the session cookie and CSRF token. */

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

/** Set from `GET /api/session`; sent as `X-CSRF-Token` on every change. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const data = (await res.json().catch(() => ({}))) as {
    error?: { code: string; message: string; details?: Record<string, unknown> };
  };
  if (!res.ok || data.error) {
    const e = data.error ?? { code: 'internal', message: `HTTP ${res.status}` };
    throw new ApiError(e.code, e.message, res.status, e.details);
  }
  return data as T;
}

export interface SessionUser {
  id: string;
  name: string;
  email: string | null;
  role: string;
  custom_role: string | null;
  permissions: string[];
  account_id: string;
}

export interface SessionInfo {
  user: SessionUser | null;
  accounts?: { id: string; name: string; role: string }[];
  credentials?: { passkeys: number; password: boolean; recovery_codes_left: number };
  csrf_token?: string | null;
}

export async function loadSession(): Promise<SessionInfo> {
  const s = await api<SessionInfo>('GET', '/api/session');
  setCsrfToken(s.csrf_token ?? null);
  return s;
}

export function can(user: SessionUser | null, permission: string): boolean {
  return !!user && user.permissions.includes(permission);
}
