import type { Context } from 'hono';
import { clientOf } from '../../http/client-address';
import { checkSameOrigin, requireUser, requireUserForChange } from '../current-user';
import type { IdentityDeps, OpContext, PublicOpContext } from '../op-context';
import { setSessionCookie } from '../session-cookie';

/** The JSON body of a request; an empty or malformed body reads as `{}` (the operation's schema then refuses). */
export async function jsonBody(c: Context): Promise<unknown> {
  return c.req.json().catch(() => ({}));
}

/** The real client's address, behind trusted proxies only (http/client-address.ts). */
function clientAddress(c: Context): string {
  return clientOf(c).address;
}

/** A route for an operation run before sign-in: same-origin check, then the operation. */
export function publicOp<T>(deps: IdentityDeps, op: (ctx: PublicOpContext, input: unknown) => Promise<T>) {
  return async (c: Context) => {
    checkSameOrigin(c, deps);
    const ctx = {
      deps,
      now: deps.now(),
      userAgent: c.req.header('user-agent') ?? null,
      clientAddress: clientAddress(c),
    };
    return c.json(withSession(c, deps, await op(ctx, await jsonBody(c))));
  };
}

/** A route for an operation by a signed-in person: session, CSRF for changes, then the operation. */
export function userOp<T>(deps: IdentityDeps, op: (ctx: OpContext, input: unknown) => Promise<T>) {
  return async (c: Context) => {
    const user = c.req.method === 'GET' ? await requireUser(c, deps) : await requireUserForChange(c, deps);
    const input = c.req.method === 'GET' ? c.req.query() : { ...((await jsonBody(c)) as object), ...c.req.param() };
    const result = await op({ deps, user, now: deps.now() }, input);
    return c.json(withSession(c, deps, result ?? { ok: true }));
  };
}

/** An operation that started a session sets its cookie; the token itself never goes into the JSON. */
function withSession<T>(c: Context, deps: IdentityDeps, result: T): unknown {
  if (result && typeof result === 'object' && 'token' in result && 'session' in result) {
    const { token, session, ...rest } = result as { token: string; session: { id: string } } & Record<string, unknown>;
    setSessionCookie(c, deps.publicUrl, token);
    return { ok: true, ...rest };
  }
  return result;
}
