import { LetKiteError } from '@letkite/protocol';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie } from 'hono/cookie';
import { cors } from 'hono/cors';
import { hashSecret } from '../auth/secrets';
import { listConnections } from '../connections/list-connections';
import { revokeConnection } from '../connections/revoke-connection';
import { clientOf } from '../http/client-address';
import { checkCsrf, currentUser, requireUser, requireUserForChange, sessionCookieName } from '../identity/current-user';
import { hasPermission, seesEveryMachine } from '../identity/permissions';
import { reachableMachines } from '../machines/resolve-machine';
import { choosablePolicies } from '../policies/choosable-policies';
import { userRoute } from '../services/adapters/rest';
import { approveAuthorization } from './approve-authorization';
import {
  type AuthorizationParams,
  type AuthorizationProblem,
  pickAuthorizationParams,
  redirectWith,
  validateAuthorizationRequest,
} from './authorization-request';
import { consentHeaders, consentPage, errorPage, SIGN_IN_PATH } from './consent-page';
import { exchangeToken } from './exchange-token';
import { authorizationServerMetadata, protectedResourceMetadata } from './metadata';
import type { OAuthContext } from './oauth-deps';
import { OAuthError } from './oauth-error';
import { registerClient } from './register-client';
import { revokeToken } from './revoke-token';
import { issuerOf } from './tokens';

/** Form fields as single strings; a repeated OAuth parameter is refused (RFC 6749 §3.1). */
async function formOf(c: Context, repeatable: readonly string[] = []): Promise<Record<string, string | undefined>> {
  const body = await c.req.parseBody({ all: true });
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(body)) {
    if (Array.isArray(v) && !repeatable.includes(k)) {
      throw new OAuthError('invalid_request', `parameter "${k}" is repeated`);
    }
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

function oauthFailure(c: Context, err: unknown, log: (msg: string) => void): Response {
  const e = err instanceof OAuthError ? err : new OAuthError('server_error', 'internal error');
  if (!(err instanceof OAuthError)) log(`oauth endpoint ${c.req.path} failed: ${String(err)}`);
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  if (e.retryAfterS !== undefined) headers['Retry-After'] = String(e.retryAfterS);
  return c.json(e.toBody(), e.status, headers);
}

/**
 * The OAuth 2.1 authorization server for MCP clients (MCP 2025-11-25 authorization): discovery metadata, dynamic
 * registration, the consent page at /authorize, the token and revocation endpoints, and the web app's
 * connections API.
 */
export function oauthRoutes(ctx: OAuthContext): Hono {
  const app = new Hono();
  const issuer = issuerOf(ctx.publicUrl);

  // Discovery, registration, token and revocation carry no cookies, so any browser-based client may call them.
  const openCors = cors({ origin: '*', allowHeaders: ['Content-Type', 'Authorization', 'MCP-Protocol-Version'] });
  app.use('/.well-known/*', openCors);
  app.use('/oauth/*', openCors);

  const prm = (c: Context) => c.json(protectedResourceMetadata(ctx.publicUrl));
  app.get('/.well-known/oauth-protected-resource/mcp', prm);
  app.get('/.well-known/oauth-protected-resource', prm);
  app.get('/.well-known/oauth-authorization-server', (c) => c.json(authorizationServerMetadata(ctx.publicUrl)));

  app.post('/oauth/register', bodyLimit({ maxSize: 16 * 1024 }), async (c) => {
    try {
      const body = await c.req.json().catch(() => {
        throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object');
      });
      return c.json(await registerClient(ctx, body, clientOf(c).address), 201, { 'Cache-Control': 'no-store' });
    } catch (err) {
      return oauthFailure(c, err, ctx.log);
    }
  });

  app.post('/oauth/token', bodyLimit({ maxSize: 16 * 1024 }), async (c) => {
    try {
      const tokens = await exchangeToken(ctx, await formOf(c), c.req.header('authorization'));
      return c.json(tokens, 200, { 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    } catch (err) {
      return oauthFailure(c, err, ctx.log);
    }
  });

  app.post('/oauth/revoke', bodyLimit({ maxSize: 16 * 1024 }), async (c) => {
    try {
      await revokeToken(ctx, await formOf(c));
      return c.body(null, 200);
    } catch (err) {
      return oauthFailure(c, err, ctx.log);
    }
  });

  /** Answers a bad authorization request: an error page, or the error sent back to a known-good redirect URI. */
  const problem = (c: Context, p: AuthorizationProblem) =>
    p.kind === 'page'
      ? c.html(errorPage(p.message), 400, consentHeaders(null))
      : c.redirect(
          redirectWith(p.redirectUri, {
            error: p.error,
            error_description: p.description,
            state: p.state,
            iss: issuer,
          }),
          302,
        );

  app.get('/authorize', async (c) => {
    const params = pickAuthorizationParams(c.req.query());
    const checked = await validateAuthorizationRequest(ctx, params);
    if (!checked.ok) return problem(c, checked.problem);
    const user = await currentUser(c, ctx);
    if (!user) {
      const back = `/authorize?${new URL(c.req.url).searchParams.toString()}`;
      return c.redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(back)}`, 302);
    }
    const session = await ctx.identity.findSessionByTokenHash(
      hashSecret(getCookie(c, sessionCookieName(ctx.publicUrl)) ?? ''),
    );
    const canConnect = hasPermission(user, 'clients.connect');
    const groups = canConnect
      ? (await ctx.identity.listGroups(user.accountId)).filter(
          (g) => g.machineIds.length > 0 && (seesEveryMachine(user.role) || g.memberIds.includes(user.userId)),
        )
      : [];
    const html = consentPage({
      request: checked.request,
      userName: user.name,
      canConnect,
      csrfToken: session?.csrfToken ?? '',
      machines: canConnect ? await reachableMachines(ctx, user) : [],
      groups,
      policies: canConnect ? await choosablePolicies(ctx.policies, user.accountId) : [],
    });
    return c.html(html, 200, consentHeaders(checked.request.redirectUri));
  });

  app.post('/authorize', bodyLimit({ maxSize: 64 * 1024 }), async (c) => {
    const form = await c.req.parseBody({ all: true });
    const one = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : undefined);
    const many = (k: string) => [form[k] ?? []].flat().filter((v): v is string => typeof v === 'string');
    const params = pickAuthorizationParams(Object.fromEntries(Object.keys(form).map((k) => [k, one(k)])));
    const checked = await validateAuthorizationRequest(ctx, params);
    if (!checked.ok) return problem(c, checked.problem);
    const user = await requireUser(c, ctx);
    await checkCsrf(c, ctx, { formToken: one('csrf_token') ?? '' });
    const { redirectUri, state } = checked.request;
    if (one('decision') !== 'allow') {
      return c.redirect(redirectWith(redirectUri, { error: 'access_denied', state, iss: issuer }), 303);
    }
    const kind = one('machines_kind');
    const machines =
      kind === 'chosen'
        ? { kind, ids: many('machine_ids') }
        : kind === 'group'
          ? { kind, group_id: one('group_id') }
          : { kind: 'all' };
    try {
      const { redirectTo } = await approveAuthorization(ctx, user, checked.request, {
        groups: many('groups'),
        machines,
        policy: one('policy'),
      });
      return c.redirect(redirectTo, 303);
    } catch (err) {
      if (err instanceof LetKiteError && err.code === 'forbidden' && err.details?.permission) {
        return c.redirect(
          redirectWith(redirectUri, { error: 'access_denied', error_description: err.message, state, iss: issuer }),
          303,
        );
      }
      if (err instanceof LetKiteError) return c.html(errorPage(err.message), 400, consentHeaders(null));
      throw err;
    }
  });

  /** The consent decision as JSON, for the web app or a script holding a session: `{ redirect_to }`. */
  app.post('/api/oauth/consent', bodyLimit({ maxSize: 64 * 1024 }), async (c) => {
    const user = await requireUserForChange(c, ctx);
    const body = (await c.req.json().catch(() => null)) as Record<string, unknown> | null;
    if (!body || typeof body !== 'object') throw new LetKiteError('invalid_params', 'the body must be a JSON object');
    const params: AuthorizationParams = pickAuthorizationParams(
      Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? v : undefined])),
    );
    const checked = await validateAuthorizationRequest(ctx, params);
    if (!checked.ok) {
      const p = checked.problem;
      if (p.kind === 'page') throw new LetKiteError('invalid_params', p.message);
      return c.json({
        redirect_to: redirectWith(p.redirectUri, {
          error: p.error,
          error_description: p.description,
          state: p.state,
          iss: issuer,
        }),
      });
    }
    if (body.decision !== 'allow') {
      return c.json({
        redirect_to: redirectWith(checked.request.redirectUri, {
          error: 'access_denied',
          state: checked.request.state,
          iss: issuer,
        }),
      });
    }
    const { redirectTo, grant } = await approveAuthorization(ctx, user, checked.request, body);
    return c.json({ redirect_to: redirectTo, grant });
  });

  app.get('/api/connections', userRoute(ctx, listConnections));
  app.delete('/api/connections/:id', userRoute(ctx, revokeConnection));

  return app;
}
