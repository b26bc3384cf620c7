import type { Context } from 'hono';
import { z } from 'zod';
import { publicRoute, type RestOptions, userRoute } from '../../services/adapters/rest';
import { defineService, type Service } from '../../services/define-service';
import { type AnonymousContext, type IdentityDeps, NoInput, type OpContext, type PublicOpContext } from '../op-context';
import type { Permission } from '../permissions';
import { setSessionCookie } from '../session-cookie';

/**
 * The identity API's routes over the REST adapter (services/adapters/rest.ts), which does the session, CSRF and
 * same-origin checks, parses with the operation's schema and maps errors with the one REST table. Every identity
 * answer goes through `withSession`, so an operation that started a session sets its cookie.
 */
export function identityRoutes(deps: IdentityDeps) {
  const options: RestOptions<unknown> = { present: (c, result) => withSession(c, deps, result) };
  return {
    /** A route for an operation by a signed-in person. */
    user: <O>(service: Service<z.ZodType, O, OpContext>) => userRoute(deps, service, options as RestOptions<O>),
    /** A route for an operation run before sign-in. */
    public: <O>(service: Service<z.ZodType, O, AnonymousContext>) =>
      publicRoute(deps, service, options as RestOptions<O>),
  };
}

/** A read-only view for the web app as an operation: no input, a permission when the view needs one. */
export function view<O>(name: string, permission: Permission | undefined, run: (ctx: OpContext) => Promise<O>) {
  return defineService({
    name,
    input: NoInput,
    ...(permission ? { permission } : {}),
    run: (ctx: OpContext) => run(ctx),
  });
}

/**
 * An operation run before sign-in (sign-in, first-run setup) as a service: it parses its own input, and its
 * context keeps the user agent and the client address (behind trusted proxies only) that it rate-limits by.
 */
export function beforeSignIn<O>(name: string, op: (ctx: PublicOpContext, raw: unknown) => Promise<O>) {
  return defineService({
    name,
    input: z.unknown(),
    run: (ctx: AnonymousContext, raw) =>
      op(
        {
          deps: ctx.deps,
          now: ctx.now,
          userAgent: ctx.caller?.userAgent ?? null,
          clientAddress: ctx.caller?.address ?? '',
        },
        raw,
      ),
  });
}

/** An operation that started a session sets its cookie; the token itself never goes into the JSON. */
function withSession(c: Context, deps: IdentityDeps, result: unknown): unknown {
  if (result && typeof result === 'object' && 'token' in result && 'session' in result) {
    const {
      token,
      session: _session,
      ...rest
    } = result as { token: string; session: { id: string } } & Record<string, unknown>;
    setSessionCookie(c, deps.publicUrl, token);
    return { ok: true, ...rest };
  }
  return result ?? { ok: true };
}
