import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Next } from 'hono';

/** Where `npm run build -w @letkite/webapp` puts the web app. */
export const WEBAPP_DIST = import.meta.letkiteBundle
  ? fileURLToPath(new URL('./webapp', import.meta.url)) // built: copied next to the bundle (tools/build)
  : resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../webapp/dist');

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * Strict policy for the web app: only our own scripts and styles (no inline script), no plugins, no framing;
 * connections only to ourselves. Agent-reported text is rendered by React as text, and this is the backstop.
 */
export const WEBAPP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Paths that belong to the gateway's APIs, never to the web app (an unknown one there is a 404, not the SPA). */
const notWebApp = /^\/(api|mcp|agent|oauth|\.well-known|healthz|readyz|metrics)(\/|$)/;

function securityHeaders(c: Context): void {
  c.header('Content-Security-Policy', WEBAPP_CSP);
  c.header('X-Frame-Options', 'DENY');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'no-referrer');
  c.header('Cross-Origin-Opener-Policy', 'same-origin');
  c.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), publickey-credentials-get=(self)');
}

/**
 * Serves the built web app: files from `dist`, and `index.html` for any other GET (client-side routes such as
 * `/setup` or `/machines`). Hashed assets are cached for a year; `index.html` never.
 */
export function serveWebApp(dist: string = WEBAPP_DIST) {
  return async (c: Context, next: Next) => {
    if ((c.req.method !== 'GET' && c.req.method !== 'HEAD') || notWebApp.test(c.req.path)) return next();
    const index = join(dist, 'index.html');
    if (!existsSync(index)) {
      return c.text('The web app is not built yet: run `npm run build -w @letkite/webapp`.', 503);
    }
    const path = normalize(decodeURIComponent(c.req.path)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dist, path);
    securityHeaders(c);
    if (file.startsWith(`${dist}/`) && existsSync(file) && statSync(file).isFile()) {
      c.header('Content-Type', types[extname(file)] ?? 'application/octet-stream');
      c.header('Cache-Control', path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      return c.body(readFileSync(file));
    }
    c.header('Content-Type', types['.html']);
    c.header('Cache-Control', 'no-store');
    return c.body(readFileSync(index));
  };
}
