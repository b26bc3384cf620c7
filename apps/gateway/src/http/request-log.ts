import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { clientOf } from './client-address';
import type { Logger } from './logger';
import type { GatewayMetrics } from './metrics';

declare module 'hono' {
  interface ContextVariableMap {
    /** This request's id, as logged and sent back in X-Request-Id (set by requestLog). */
    requestId: string;
  }
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** An incoming X-Request-Id (from a proxy) is kept when it is short and plain; otherwise a new one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const PROBES = new Set(['/healthz', '/readyz']);

export interface RequestLogOptions {
  logger?: Logger;
  metrics?: GatewayMetrics;
  /** The level of the per-request line: info for `letkite gateway`, debug under `letkite start`. */
  level?: 'info' | 'debug';
}

/**
 * One log line and one metrics sample per request: method, the matched route pattern (never the path, the query
 * string, a header or the body: those can carry tokens), status, duration and a request id, which is also sent back
 * as X-Request-Id.
 */
export function requestLog(options: RequestLogOptions): MiddlewareHandler {
  const level = options.level ?? 'info';
  return async (c, next) => {
    const started = performance.now();
    const incoming = c.req.header('x-request-id');
    const id = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    // The same id reaches the service context (services/adapters/rest.ts) and so the audit row.
    c.set('requestId', id);
    await next();
    const seconds = (performance.now() - started) / 1000;
    const method = METHODS.has(c.req.method) ? c.req.method : 'OTHER';
    const route = c.req.routePath;
    const status = c.res.status;
    try {
      c.res.headers.set('X-Request-Id', id);
    } catch {
      // An immutable response (a fetched one passed through): it goes out without the header.
    }
    const client = clientOf(c).address;
    options.metrics?.request(method, route, status, seconds);
    // Probes (a load balancer, a kubelet) ask every few seconds: their lines are debug, their metrics still count.
    options.logger?.[PROBES.has(route) ? 'debug' : level](
      {
        req_id: id,
        method,
        route,
        status,
        duration_ms: Math.round(seconds * 10_000) / 10,
        // The real client behind trusted proxies (LETKITE_TRUSTED_PROXIES), else the socket's peer; none without one.
        ...(client ? { client } : {}),
      },
      'request',
    );
  };
}
