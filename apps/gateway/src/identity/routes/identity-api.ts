import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { IdentityDeps } from '../op-context';
import { accountRoutes } from './account-routes';
import { authRoutes } from './auth-routes';

/** The web app's REST API for people and the account (mounted at `/api`). */
export function identityApi(deps: IdentityDeps): Hono {
  const api = new Hono();
  api.use('*', bodyLimit({ maxSize: 64 * 1024 }));
  api.use('*', async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  });
  api.route('/', authRoutes(deps));
  api.route('/', accountRoutes(deps));
  return api;
}
