import { LetKiteError } from '@letkite/protocol';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { constantTimeEqual, hashSecret } from '../auth/secrets';
import type { GatewayDeps } from '../deps';
import { permissionsOf } from './permissions';

/** A person signed in to the web app, in the account their session is working in. */
export interface SignedInUser {
  userId: string;
  accountId: string;
  /** `owner`, `admin` or `member` (the membership's built-in role; a custom role shows in `permissions`). */
  role: string;
  permissions: ReadonlySet<string>;
  sessionId: string;
  name: string;
}

/** What session lookups need from the gateway's dependencies. */
export type SessionDeps = Pick<GatewayDeps, 'identity' | 'store' | 'now' | 'publicUrl'>;

/** Sessions end a week after sign-in, or after a day without use. */
export const SESSION_TTL_MS = 7 * 24 * 3_600_000;
export const SESSION_IDLE_MS = 24 * 3_600_000;
const TOUCH_EVERY_MS = 60_000;

/** Under https the cookie is `__Host-` prefixed (Secure, no Domain, Path=/), so no subdomain can set or read it. */
export function sessionCookieName(publicUrl: string): string {
  return isHttps(publicUrl) ? '__Host-letkite_session' : 'letkite_session';
}

export function isHttps(publicUrl: string): boolean {
  return new URL(publicUrl).protocol === 'https:';
}

const resolved = new WeakMap<Request, Promise<SignedInUser | null>>();

/** The person signed in on this request (by their session cookie), or null. Resolved once per request. */
export function currentUser(c: Context, deps: SessionDeps): Promise<SignedInUser | null> {
  let found = resolved.get(c.req.raw);
  if (!found) {
    found = lookUp(getCookie(c, sessionCookieName(deps.publicUrl)), deps);
    resolved.set(c.req.raw, found);
  }
  return found;
}

async function lookUp(token: string | undefined, deps: SessionDeps): Promise<SignedInUser | null> {
  if (!token || token.length > 200) return null;
  const session = await deps.identity.findSessionByTokenHash(hashSecret(token));
  const now = deps.now();
  if (!session || session.revokedAt !== null) return null;
  if (session.expiresAt <= now.toISOString()) return null;
  if (now.getTime() - Date.parse(session.lastSeenAt) > SESSION_IDLE_MS) return null;
  const membership = await deps.identity.membership(session.accountId, session.userId);
  const user = membership && (await deps.store.getUser(session.userId));
  if (!membership || !user) return null;
  if (now.getTime() - Date.parse(session.lastSeenAt) > TOUCH_EVERY_MS) {
    await deps.identity.touchSession(session.id, now.toISOString());
  }
  return {
    userId: user.id,
    accountId: session.accountId,
    role: membership.role,
    permissions: permissionsOf(membership.role, membership.customRole?.permissions ?? null),
    sessionId: session.id,
    name: user.name,
  };
}

/** The signed-in person, or `unauthenticated` (the app maps it to a 401 JSON body). */
export async function requireUser(c: Context, deps: SessionDeps): Promise<SignedInUser> {
  const user = await currentUser(c, deps);
  if (!user) throw new LetKiteError('unauthenticated', 'sign in first');
  return user;
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The first CSRF check, for every state-changing request (sign-in and setup included): the browser's `Origin` (or,
 * without it, `Sec-Fetch-Site`) must be our own origin. Throws `forbidden`.
 */
export function checkSameOrigin(c: Context, deps: Pick<SessionDeps, 'publicUrl'>): void {
  if (safeMethods.has(c.req.method)) return;
  const origin = c.req.header('origin');
  const fetchSite = c.req.header('sec-fetch-site');
  const sameOrigin = origin !== undefined ? origin === new URL(deps.publicUrl).origin : fetchSite === 'same-origin';
  if (!sameOrigin) throw new LetKiteError('forbidden', 'cross-site request refused', { reason: 'origin' });
}

/**
 * CSRF protection for a state-changing request by a signed-in person: `checkSameOrigin`, and the request must echo
 * the session's CSRF token in `X-CSRF-Token` (or pass it as `formToken` from a form field). Throws `forbidden`.
 */
export async function checkCsrf(c: Context, deps: SessionDeps, options: { formToken?: string } = {}): Promise<void> {
  if (safeMethods.has(c.req.method)) return;
  checkSameOrigin(c, deps);
  const user = await currentUser(c, deps);
  if (!user) return;
  const session = await deps.identity.findSessionByTokenHash(
    hashSecret(getCookie(c, sessionCookieName(deps.publicUrl)) ?? ''),
  );
  const sent = options.formToken ?? c.req.header('x-csrf-token') ?? '';
  if (!session || !constantTimeEqual(sent, session.csrfToken)) {
    throw new LetKiteError('forbidden', 'missing or wrong CSRF token', { reason: 'csrf' });
  }
}

/** `requireUser` plus `checkCsrf`: what every state-changing route for signed-in people starts with. */
export async function requireUserForChange(c: Context, deps: SessionDeps): Promise<SignedInUser> {
  const user = await requireUser(c, deps);
  await checkCsrf(c, deps);
  return user;
}
