import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { hashSecret, newId } from '../auth/secrets';
import type { AuditEventInput } from '../store/types';
import { isHttps, SESSION_TTL_MS, sessionCookieName } from './current-user';
import type { SessionMethod, WebSession } from './identity-store';

/** A new web session row (token hashed) and the secret for the cookie. */
export function newWebSession(args: {
  userId: string;
  accountId: string;
  method: SessionMethod;
  userAgent: string | null;
  now: Date;
}): { session: WebSession & { tokenHash: string }; token: string } {
  const token = `lks_${randomBytes(32).toString('base64url')}`;
  const at = args.now.toISOString();
  return {
    token,
    session: {
      id: newId('ses'),
      tokenHash: hashSecret(token),
      userId: args.userId,
      accountId: args.accountId,
      csrfToken: randomBytes(24).toString('base64url'),
      method: args.method,
      userAgent: args.userAgent?.slice(0, 300) ?? null,
      createdAt: at,
      lastSeenAt: at,
      expiresAt: new Date(args.now.getTime() + SESSION_TTL_MS).toISOString(),
      revokedAt: null,
    },
  };
}

/** The audit event of a sign-in. */
export function signInAudit(session: WebSession, actor: string): AuditEventInput {
  return {
    accountId: session.accountId,
    at: session.createdAt,
    actor,
    action: 'session.create',
    target: session.id,
    outcome: 'ok',
    details: { method: session.method },
  };
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, Path=/, no Domain; `__Host-` named and Secure under https. */
export function setSessionCookie(c: Context, publicUrl: string, token: string): void {
  const secure = isHttps(publicUrl);
  setCookie(c, sessionCookieName(publicUrl), token, {
    httpOnly: true,
    sameSite: 'Lax',
    secure,
    path: '/',
    maxAge: SESSION_TTL_MS / 1000,
  });
}

export function clearSessionCookie(c: Context, publicUrl: string): void {
  const secure = isHttps(publicUrl);
  deleteCookie(c, sessionCookieName(publicUrl), { path: '/', secure });
}
