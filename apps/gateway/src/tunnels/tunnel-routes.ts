import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { LetKiteError, toLetKiteError } from '@letkite/protocol';
import { type Context, Hono } from 'hono';
import { authenticateBearer } from '../auth/authenticate-bearer';
import type { GatewayDeps } from '../deps';
import { httpStatusOf } from '../http/error-status';
import { checkSameOrigin, currentUser, sessionCookieName } from '../identity/current-user';
import { hasPermission } from '../identity/permissions';
import { resolveMachine } from '../machines/resolve-machine';
import type { OAuthStore } from '../oauth/oauth-store';
import { mcpResource } from '../oauth/tokens';
import type { Tunnel, TunnelRegistry } from './tunnel-registry';

/** What the /t/ routes need: the gateway's deps, its tunnels, and the OAuth store (bearer tokens of connections). */
export type TunnelRouteDeps = GatewayDeps & { oauth: { store: OAuthStore } };

/** Headers that describe one hop, not the message: never passed on either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/**
 * Served with every tunnelled response: the page runs in an opaque origin, so a web service on a machine cannot
 * script the dashboard (same host and port as the gateway) with the viewer's session — read /api, take the
 * CSRF token, act as them. The price: a browser sends the session cookie only with top-level navigations to the
 * tunnel, not with the page's own sub-requests; bearer clients are not affected.
 */
const SANDBOX_CSP = 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads';

function refuse(c: Context, err: unknown): Response {
  const e = toLetKiteError(err);
  return c.json({ error: e.toPayload() }, httpStatusOf[e.code]);
}

/**
 * Who may use a tunnel: the credential that opened it (its bearer token), or a person signed in to the tunnel's
 * account who may see machines, that machine included. A cookie-authenticated change (POST …) must come from our own origin (CSRF).
 * Anything else looks like a tunnel that does not exist.
 */
async function authorize(c: Context, deps: TunnelRouteDeps, tunnel: Tunnel): Promise<'bearer' | 'cookie'> {
  const header = c.req.header('authorization');
  if (header !== undefined) {
    const principal = await authenticateBearer(
      { ...deps, oauth: deps.oauth.store, now: deps.now(), resource: mcpResource(deps.publicUrl) },
      header,
    );
    if (principal.credentialId !== tunnel.owner.credentialId) {
      throw new LetKiteError('not_found', `no tunnel "${tunnel.id}"`);
    }
    return 'bearer';
  }
  const user = await currentUser(c, deps);
  if (!user) throw new LetKiteError('unauthenticated', 'sign in, or send the bearer token that opened the tunnel');
  if (user.accountId !== tunnel.owner.accountId || !hasPermission(user, 'machines.view')) {
    throw new LetKiteError('not_found', `no tunnel "${tunnel.id}"`);
  }
  // A machine a group claims is reachable only to that group's members (and owners and admins): so is its tunnel.
  await resolveMachine(deps, user, tunnel.machineId).catch(() => {
    throw new LetKiteError('not_found', `no tunnel "${tunnel.id}"`);
  });
  checkSameOrigin(c, deps);
  return 'cookie';
}

/** The request's headers for the target: no LetKite credential (the bearer, the session cookie), no hop headers. */
function forwardedHeaders(raw: Headers, publicUrl: string, target: string): Record<string, string> {
  const out: Record<string, string> = {};
  const sessionCookie = sessionCookieName(publicUrl);
  for (const [name, value] of raw) {
    if (HOP_BY_HOP.has(name) || name === 'authorization') continue;
    if (name === 'cookie') {
      const kept = value
        .split(';')
        .map((part) => part.trim())
        .filter((part) => part !== '' && part.split('=')[0]?.trim() !== sessionCookie);
      if (kept.length > 0) out.cookie = kept.join('; ');
      continue;
    }
    out[name] = value;
  }
  out.host = target;
  // One request per connection through the machine: the connection ends with the response.
  out.connection = 'close';
  return out;
}

/** A Set-Cookie that would land on the gateway's own cookies (the session) is dropped. */
function isLetKiteCookie(setCookie: string): boolean {
  const name = setCookie.split('=')[0]?.trim().toLowerCase() ?? '';
  return name.includes('letkite');
}

function responseHeaders(res: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    if (HOP_BY_HOP.has(name) || name === 'content-security-policy') continue;
    if (name === 'set-cookie' && isLetKiteCookie(value)) continue;
    headers.append(name, value);
  }
  headers.set('content-security-policy', SANDBOX_CSP);
  return headers;
}

/** Forwards one request through a new connection of the tunnel and streams the answer back with backpressure. */
async function proxy(c: Context, deps: TunnelRouteDeps, registry: TunnelRegistry, tunnel: Tunnel): Promise<Response> {
  const connection = registry.connect(tunnel);
  try {
    await connection.connected;
  } catch (err) {
    connection.destroy();
    throw err;
  }
  const url = new URL(c.req.url);
  const prefix = `/t/${tunnel.id}`;
  const path = `${url.pathname.slice(prefix.length) || '/'}${url.search}`;
  const upstream = httpRequest({
    createConnection: () => connection,
    method: c.req.method,
    path,
    headers: forwardedHeaders(c.req.raw.headers, deps.publicUrl, tunnel.target),
    setHost: false,
  });
  // A connection cut mid-way surfaces as the response stream's end; later errors must not go unhandled.
  upstream.on('error', () => connection.destroy());
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    upstream.once('response', resolve);
    upstream.once('error', reject);
  });
  const body = c.req.raw.body;
  if (body && c.req.method !== 'GET' && c.req.method !== 'HEAD') {
    const requestBody = Readable.fromWeb(body as NodeReadableStream<Uint8Array>);
    requestBody.on('error', () => connection.destroy());
    requestBody.pipe(upstream);
  } else {
    upstream.end();
  }
  c.req.raw.signal.addEventListener('abort', () => connection.destroy(), { once: true });
  let res: IncomingMessage;
  try {
    res = await answered;
  } catch {
    connection.destroy();
    throw new LetKiteError('not_found', `the service at ${tunnel.target} closed the connection without answering`);
  }
  res.on('error', () => connection.destroy());
  res.once('close', () => connection.destroy());
  const status = res.statusCode ?? 502;
  const noBody = c.req.method === 'HEAD' || status === 204 || status === 304 || status < 200;
  if (noBody) res.resume();
  const stream = noBody ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
  return new Response(stream, { status: status < 200 ? 502 : status, headers: responseHeaders(res) });
}

/**
 * `/t/<tunnel_id>/…`: a kind "http" tunnel's web service, for people signed in to its account and for the
 * credential that opened it. Only the Host header is rewritten; the LetKite session cookie and the
 * Authorization header are never passed to the target.
 */
export function tunnelRoutes(deps: TunnelRouteDeps): Hono {
  const app = new Hono();
  const handle = async (c: Context) => {
    const registry = deps.tunnels;
    const id = c.req.param('id') ?? '';
    const tunnel = registry?.get(id);
    try {
      if (!registry || !tunnel || tunnel.kind !== 'http') throw new LetKiteError('not_found', `no tunnel "${id}"`);
      await authorize(c, deps, tunnel);
      if (new URL(c.req.url).pathname === `/t/${id}`) return c.redirect(`/t/${id}/`, 308);
      return await proxy(c, deps, registry, tunnel);
    } catch (err) {
      return refuse(c, err);
    }
  };
  app.all('/t/:id', handle);
  app.all('/t/:id/*', handle);
  return app;
}
