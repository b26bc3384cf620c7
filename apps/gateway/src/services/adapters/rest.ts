import { LetKiteError } from '@letkite/protocol';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { clientOf } from '../../http/client-address';
import { httpStatusOf } from '../../http/error-status';
import {
  checkSameOrigin,
  requireUser,
  requireUserForChange,
  type SessionDeps,
  type SignedInUser,
} from '../../identity/current-user';
import { type Actor, type UserActor, userActor } from '../actor';
import type { Service } from '../define-service';
import { newRequestId, type ServiceContext } from '../service-context';

/** Where a route's input comes from: GET reads the query string; other methods the JSON body plus path params. */
export type RestInput = 'auto' | 'none';

/** How a route answers: the JSON body and status, from the operation's result. */
export interface RestOptions<O> {
  /** The success status (200 unless said). */
  status?: ContentfulStatusCode;
  /** Turns the result into the response body (default: the result itself, `{ ok: true }` for none). */
  present?: (c: Context, result: O) => unknown;
  /** `none`: the operation takes no input from the request (its schema still runs, on `{}`). */
  input?: RestInput;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The JSON body of a request; an empty or malformed body reads as `{}` (the operation's schema then refuses). */
export async function jsonBody(c: Context): Promise<unknown> {
  return c.req.json().catch(() => ({}));
}

/**
 * The client's address (for rate limits; '' when unknown) and user agent. The address is the real client's only
 * behind a trusted proxy (http/client-address.ts): a forwarding header anyone can send is not believed.
 */
export function requestClient(c: Context): { userAgent: string | null; address: string } {
  return { userAgent: c.req.header('user-agent') ?? null, address: clientOf(c).address };
}

/** The request's id: the caller's X-Request-Id when it is well formed (the request log uses the same rule). */
export function requestIdOf(c: Context): string {
  const logged = c.get('requestId');
  if (logged) return logged;
  const incoming = c.req.header('x-request-id');
  return incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : newRequestId();
}

async function inputOf(c: Context, mode: RestInput): Promise<unknown> {
  if (mode === 'none') return {};
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return { ...c.req.query(), ...c.req.param() };
  const body = await jsonBody(c);
  // A JSON array or scalar is not an operation's input: the schema sees `{}` plus the path and refuses by name.
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
  return { ...fields, ...c.req.param() };
}

/**
 * Runs an operation for one request and answers with its result, or with its error mapped by the one REST table
 * (`http/error-status.ts`) as `{ error: { code, message, details } }`. Errors that are not a LetKiteError go on
 * to the app's error handler (logged, answered as `internal`).
 */
async function answer<O, C extends ServiceContext<unknown>>(
  c: Context,
  service: Service<z.ZodType, O, C>,
  ctx: C,
  options: RestOptions<O>,
): Promise<Response> {
  try {
    const result = await service.call(ctx, await inputOf(c, options.input ?? 'auto'));
    const body = options.present ? options.present(c, result) : (result ?? { ok: true });
    return c.json(body as object, options.status ?? 200);
  } catch (err) {
    if (!(err instanceof LetKiteError)) throw err;
    return c.json({ error: err.toPayload() }, httpStatusOf[err.code]);
  }
}

/**
 * A route for an operation by a signed-in person: the session (and, for a change, the CSRF checks), then the
 * operation with a `user` actor in the session's account.
 */
export function userRoute<D extends SessionDeps, O>(
  deps: D,
  service: Service<z.ZodType, O, ServiceContext<NoInfer<D>, UserActor>>,
  options: RestOptions<O> = {},
) {
  return async (c: Context) => {
    let user: SignedInUser;
    try {
      user = c.req.method === 'GET' ? await requireUser(c, deps) : await requireUserForChange(c, deps);
    } catch (err) {
      if (!(err instanceof LetKiteError)) throw err;
      return c.json({ error: err.toPayload() }, httpStatusOf[err.code]);
    }
    return answer(c, service, userContext(c, deps, user), options);
  };
}

/** The context of an operation by a signed-in person on this request (for a route that runs one itself). */
export function userContext<D extends { now: () => Date }>(
  c: Context,
  deps: D,
  user: SignedInUser,
): ServiceContext<D, UserActor> {
  return {
    actor: userActor(user),
    account: user.accountId,
    deps,
    now: deps.now(),
    requestId: requestIdOf(c),
    caller: requestClient(c),
  };
}

/** A route for an operation run before sign-in (sign-in, setup, invitations): the same-origin check, then it. */
export function publicRoute<D extends Pick<SessionDeps, 'publicUrl' | 'now'>, O>(
  deps: D,
  service: Service<z.ZodType, O, ServiceContext<NoInfer<D>, Extract<Actor, { kind: 'anonymous' }>>>,
  options: RestOptions<O> = {},
) {
  return async (c: Context) => {
    try {
      checkSameOrigin(c, deps);
    } catch (err) {
      if (!(err instanceof LetKiteError)) throw err;
      return c.json({ error: err.toPayload() }, httpStatusOf[err.code]);
    }
    const ctx: ServiceContext<D, { kind: 'anonymous' }> = {
      actor: { kind: 'anonymous' },
      account: null,
      deps,
      now: deps.now(),
      requestId: requestIdOf(c),
      caller: requestClient(c),
    };
    return answer(c, service, ctx, options);
  };
}
