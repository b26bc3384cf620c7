/**
 * The gateway's REST API as the web app uses it: same-origin fetch with the session cookie and CSRF token, typed by
 * the contracts in `@letkite/protocol/api`. Every answer is parsed with its endpoint's response schema, so a page
 * never renders a shape the gateway did not promise; a mismatch is an error the page shows, not a blank screen.
 */
import {
  approvalEndpoints,
  connectionEndpoints,
  type Endpoint,
  type EndpointInput,
  type EndpointOutput,
  groupEndpoints,
  machineListEndpoints,
  memberEndpoints,
  onboardingEndpoints,
  pushEndpoints,
  requestParts,
  roleEndpoints,
  type SessionResponse,
  type SessionUser,
  securityEndpoints,
  sessionEndpoints,
  tokenEndpoints,
} from '@letkite/protocol/api';

export type { SessionResponse as SessionInfo, SessionUser };

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

async function send(method: string, url: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    ...(signal ? { signal } : {}),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const data = (await res.json().catch(() => ({}))) as {
    error?: { code: string; message: string; details?: Record<string, unknown> };
  };
  if (!res.ok || data.error) {
    const e = data.error ?? { code: 'internal', message: `HTTP ${res.status}` };
    throw new ApiError(e.code, e.message, res.status, e.details);
  }
  return data;
}

/** Calls one endpoint: path parameters and request fields in one object, the answer parsed by its schema. */
export async function call<E extends Endpoint>(
  e: E,
  input?: EndpointInput<E>,
  signal?: AbortSignal,
): Promise<EndpointOutput<E>> {
  const parts = requestParts(e, (input ?? {}) as Record<string, unknown>);
  // A change always sends a JSON body (the gateway reads `{}` for none).
  const body = parts.body ?? (parts.method === 'GET' ? undefined : {});
  const data = await send(parts.method, parts.url, body, signal);
  const parsed = e.response.safeParse(data);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first ? `${first.path.join('.') || '(root)'}: ${first.message}` : '';
    throw new ApiError(
      'internal',
      `The gateway answered ${e.method} ${e.path} in an unexpected shape (${where}).`,
      200,
    );
  }
  return parsed.data as EndpointOutput<E>;
}

/** One endpoint as a function; the input may be left out when the endpoint takes none. */
export type BoundEndpoint<E extends Endpoint> =
  object extends EndpointInput<E>
    ? (input?: EndpointInput<E>, signal?: AbortSignal) => Promise<EndpointOutput<E>>
    : (input: EndpointInput<E>, signal?: AbortSignal) => Promise<EndpointOutput<E>>;

/** Binds a group of endpoints to functions: `bindEndpoints(memberEndpoints).list()`. */
export function bindEndpoints<T extends Record<string, Endpoint>>(
  endpoints: T,
): { [K in keyof T]: BoundEndpoint<T[K]> } {
  const out: Record<string, unknown> = {};
  for (const [name, e] of Object.entries(endpoints)) {
    out[name] = (input?: Record<string, unknown>, signal?: AbortSignal) =>
      call(e, input as EndpointInput<typeof e>, signal);
  }
  return out as { [K in keyof T]: BoundEndpoint<T[K]> };
}

/** The typed client: `client.machines.list()`, `client.members.changeRole({ user_id, role })`, … */
export const client = {
  session: bindEndpoints(sessionEndpoints),
  onboarding: bindEndpoints(onboardingEndpoints),
  machines: bindEndpoints(machineListEndpoints),
  members: bindEndpoints(memberEndpoints),
  roles: bindEndpoints(roleEndpoints),
  groups: bindEndpoints(groupEndpoints),
  tokens: bindEndpoints(tokenEndpoints),
  connections: bindEndpoints(connectionEndpoints),
  approvals: bindEndpoints(approvalEndpoints),
  push: bindEndpoints(pushEndpoints),
  security: bindEndpoints(securityEndpoints),
};

/**
 * An untyped call, for a route that has no contract in `@letkite/protocol/api` yet. Prefer `call`/`client`: this
 * one trusts the answer's shape blindly.
 */
export async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  return (await send(method, path, body)) as T;
}

export async function loadSession(): Promise<SessionResponse> {
  const s = await client.session.get();
  setCsrfToken(s.csrf_token ?? null);
  return s;
}

export function can(user: SessionUser | null, permission: string): boolean {
  return !!user && (user.permissions as readonly string[]).includes(permission);
}
