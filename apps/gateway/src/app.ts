import { EnrollRequest, LetKiteError, toLetKiteError } from '@letkite/protocol';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { approvalRoutes } from './approvals/approval-routes';
import { authenticateBearer } from './auth/authenticate-bearer';
import type { GatewayDeps } from './deps';
import { httpStatusOf } from './http/error-status';
import { enrollMachine } from './machines/enroll-machine';
import type { McpEndpoint } from './mcp/mcp-endpoint';

export interface AppDeps extends GatewayDeps {
  mcp: McpEndpoint;
}

/** Builds the gateway's HTTP app. It never listens: main.ts (or a test through `app.request`) does. */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();

  app.onError((err, c) => {
    const e = toLetKiteError(err);
    if (!(err instanceof LetKiteError)) deps.log(`unhandled error on ${c.req.method} ${c.req.path}: ${String(err)}`);
    return c.json({ error: e.toPayload() }, httpStatusOf[e.code]);
  });

  app.get('/healthz', (c) => c.json({ ok: true, version: deps.version }));

  app.post('/agent/v1/enroll', bodyLimit({ maxSize: 64 * 1024 }), async (c) => {
    const parsed = EnrollRequest.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) throw new LetKiteError('invalid_params', 'malformed enrollment request');
    return c.json(await enrollMachine({ store: deps.store, now: deps.now() }, parsed.data));
  });

  app.route('/api', approvalRoutes(deps));

  app.all('/mcp', bodyLimit({ maxSize: 16 * 1024 * 1024 }), async (c) => {
    let principal: Awaited<ReturnType<typeof authenticateBearer>>;
    try {
      principal = await authenticateBearer(deps.store, c.req.header('authorization'), deps.now());
    } catch (err) {
      const e = toLetKiteError(err);
      return c.json({ error: e.toPayload() }, 401, {
        'WWW-Authenticate': `Bearer realm="letkite", error="invalid_token", error_description="${e.message}"`,
      });
    }
    return deps.mcp.handle(c.req.raw, principal);
  });

  return app;
}
