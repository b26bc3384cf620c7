import { EnrollRequest, LetKiteError, toLetKiteError } from '@letkite/protocol';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { approvalRoutes } from './approvals/approval-routes';
import { auditRoutes } from './audit/audit-routes';
import { authenticateBearer } from './auth/authenticate-bearer';
import { bearerChallenge, mcpCorsHeaders, mcpOriginAllowed, mcpPreflightHeaders, stepUpScope } from './auth/mcp-access';
import type { Principal } from './auth/principal';
import type { GatewayDeps } from './deps';
import { agentDownloadRoutes } from './http/agent-download';
import { clientAddressMiddleware, type TrustedProxies } from './http/client-address';
import { httpStatusOf } from './http/error-status';
import { healthRoutes, type ReadinessCheck } from './http/health';
import type { Logger } from './http/logger';
import { requestLog } from './http/request-log';
import { serveWebApp } from './http/web-app';
import { identityApi } from './identity/routes/identity-api';
import { enrollMachine } from './machines/enroll-machine';
import type { McpEndpoint } from './mcp/mcp-endpoint';
import type { OAuthDeps } from './oauth/oauth-deps';
import { oauthRoutes } from './oauth/routes';
import { mcpResource } from './oauth/tokens';
import { policyRoutes } from './policies/policy-routes';
import { tunnelRoutes } from './tunnels/tunnel-routes';

export interface AppDeps extends GatewayDeps {
  mcp: McpEndpoint;
  /** The OAuth authorization server's store and client-document fetcher. */
  oauth: OAuthDeps;
  /** Browser origins besides our own that may call /mcp (browser-based MCP clients); none by default. */
  mcpAllowedOrigins?: readonly string[];
  /** Structured logs: one line per request (route, status, duration, request id). */
  logger?: Logger;
  /** The per-request line's level: info for `letkite gateway`, debug under the embedded `letkite start`. */
  requestLogLevel?: 'info' | 'debug';
  /** What /readyz checks besides shutdown (the store, the migrations). */
  readiness?: readonly ReadinessCheck[];
  /** True once graceful shutdown began. */
  draining?: () => boolean;
  /** This gateway's id (cluster mode), named by /readyz. */
  gatewayId?: string;
  /** Proxies whose forwarding headers name the real client (LETKITE_TRUSTED_PROXIES); none by default. */
  trustedProxies?: TrustedProxies;
}

/** Builds the gateway's HTTP app. It never listens: main.ts (or a test through `app.request`) does. */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();

  // First: rate limits, logs and audit all read the client address this resolves (http/client-address.ts).
  if (deps.trustedProxies) app.use('*', clientAddressMiddleware(deps.trustedProxies));
  app.use('*', requestLog({ logger: deps.logger, metrics: deps.metrics, level: deps.requestLogLevel }));

  app.onError((err, c) => {
    // A body over a route's bodyLimit is the client's mistake, not ours: 413 too_large, and no error line.
    const e =
      err instanceof HTTPException && err.status === 413
        ? new LetKiteError('too_large', 'the request body is larger than this endpoint accepts')
        : toLetKiteError(err);
    if (!(err instanceof LetKiteError) && e.code !== 'too_large') {
      const msg = `unhandled error on ${c.req.method} ${c.req.path}: ${String(err)}`;
      if (deps.logger) deps.logger.error(msg);
      else deps.log(msg);
    }
    return c.json({ error: e.toPayload() }, httpStatusOf[e.code]);
  });

  app.route(
    '/',
    healthRoutes({
      version: deps.version,
      checks: deps.readiness ?? [],
      draining: deps.draining,
      gatewayId: deps.gatewayId,
    }),
  );

  // The packed agent and its installer (`curl -fsSL <gateway>/agent/install.sh | sudo sh -s -- <token>`).
  app.route('/', agentDownloadRoutes({ publicUrl: deps.publicUrl }));

  app.post('/agent/v1/enroll', bodyLimit({ maxSize: 64 * 1024 }), async (c) => {
    const parsed = EnrollRequest.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) throw new LetKiteError('invalid_params', 'malformed enrollment request');
    return c.json(
      await enrollMachine(
        { store: deps.store, now: deps.now(), gatewayPublicKey: deps.gatewayIdentity.publicKey },
        parsed.data,
      ),
    );
  });

  app.route('/api', identityApi(deps));
  app.route('/api', approvalRoutes(deps));
  app.route('/api', auditRoutes(deps));
  app.route('/api', policyRoutes(deps));

  app.route('/', oauthRoutes(deps));

  const allowedOrigins = deps.mcpAllowedOrigins ?? [];
  app.options('/mcp', (c) => {
    const origin = c.req.header('origin');
    if (origin === undefined || !mcpOriginAllowed(origin, deps.publicUrl, allowedOrigins)) return c.body(null, 403);
    return c.body(null, 204, mcpPreflightHeaders(origin));
  });

  // `/mcp`, and `/mcp/sse` + `/mcp/message` (the legacy HTTP+SSE transport), with the same origin, bearer and scope
  // checks. Two routes, one handler: each keeps its own route label in the metrics and the request log.
  const mcpRoute = async (c: Context, legacy: 'sse' | 'message' | undefined): Promise<Response> => {
    const origin = c.req.header('origin');
    if (!mcpOriginAllowed(origin, deps.publicUrl, allowedOrigins)) {
      const e = new LetKiteError('forbidden', `origin "${origin}" may not call this MCP endpoint`);
      return c.json({ error: e.toPayload() }, 403);
    }
    const corsHeaders = origin === undefined ? {} : mcpCorsHeaders(origin);
    const header = c.req.header('authorization');
    let principal: Principal;
    try {
      principal = await authenticateBearer(
        { ...deps, oauth: deps.oauth.store, now: deps.now(), resource: mcpResource(deps.publicUrl) },
        header,
      );
    } catch (err) {
      const e = toLetKiteError(err);
      const challenge = bearerChallenge(
        deps.publicUrl,
        header === undefined ? undefined : { error: 'invalid_token', description: e.message },
      );
      return c.json({ error: e.toPayload() }, 401, { ...corsHeaders, 'WWW-Authenticate': challenge });
    }
    if (principal.kind === 'connection' && c.req.method === 'POST') {
      const message: unknown = await c.req.raw
        .clone()
        .json()
        .catch(() => null);
      const scope = stepUpScope(principal, message);
      if (scope !== null) {
        const e = new LetKiteError('forbidden', 'this connection was not given the scope for that tool', { scope });
        const challenge = bearerChallenge(deps.publicUrl, {
          error: 'insufficient_scope',
          description: e.message,
          scope,
        });
        return c.json({ error: e.toPayload() }, 403, { ...corsHeaders, 'WWW-Authenticate': challenge });
      }
    }
    const res = legacy
      ? await deps.mcp.legacySse.handle(c.req.raw, principal, legacy)
      : await deps.mcp.handle(c.req.raw, principal);
    if (origin === undefined) return res;
    const withCors = new Response(res.body, res);
    for (const [k, v] of Object.entries(corsHeaders)) withCors.headers.set(k, v);
    return withCors;
  };
  const mcpBodyLimit = bodyLimit({ maxSize: 16 * 1024 * 1024 });
  app.all('/mcp', mcpBodyLimit, (c) => mcpRoute(c, undefined));
  app.all('/mcp/:legacy{sse|message}', mcpBodyLimit, (c) => mcpRoute(c, c.req.param('legacy') as 'sse' | 'message'));

  // Shared web services of kind "http" tunnels (tunnels/tunnel-routes.ts).
  app.route('/', tunnelRoutes(deps));

  // Last: the web app answers any other GET (its client-side routes), with a strict CSP.
  app.get('*', serveWebApp());

  return app;
}
