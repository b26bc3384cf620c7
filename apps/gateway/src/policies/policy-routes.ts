import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { z } from 'zod';
import type { GatewayDeps } from '../deps';
import type { UserActor } from '../services/actor';
import { type RestOptions, userRoute } from '../services/adapters/rest';
import type { Service } from '../services/define-service';
import type { ServiceContext } from '../services/service-context';
import { getAccountSettings, updateAccountSettings } from './account-settings';
import { deletePolicy } from './delete-policy';
import { listPolicies } from './list-policies';
import { createPolicy, updatePolicy } from './save-policy';
import { showPolicy, showPolicyVersion } from './show-policy';
import { testPolicy } from './test-policy';
import { validatePolicy } from './validate-policy';

/** What the routes need: the stores, the clock, and the public URL (for the same-origin and session checks). */
export type PolicyRouteDeps = Pick<GatewayDeps, 'store' | 'policies' | 'identity' | 'now' | 'publicUrl'>;

/**
 * The REST routes of account policies and switches (mounted at `/api`): `@letkite/protocol/api`'s
 * `policyEndpoints` and `accountSettingsEndpoints` describe each one.
 */
export function policyRoutes(deps: PolicyRouteDeps): Hono {
  const r = new Hono();
  const route = <O>(
    service: Service<z.ZodType, O, ServiceContext<PolicyRouteDeps, UserActor>>,
    options: RestOptions<O> = {},
  ) => userRoute<PolicyRouteDeps, O>(deps, service, options);
  // A policy document is at most 256 KiB (the request schemas say so); leave room for the JSON around it.
  r.use('*', bodyLimit({ maxSize: 300 * 1024 }));
  r.use('*', async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  });
  r.get('/policies', route(listPolicies));
  r.post('/policies', route(createPolicy, { status: 201 }));
  // Before `/:name`: these two are operations, not policy names.
  r.post('/policies/validate', route(validatePolicy));
  r.post('/policies/test', route(testPolicy));
  r.get('/policies/:name', route(showPolicy));
  r.put('/policies/:name', route(updatePolicy));
  r.delete('/policies/:name', route(deletePolicy));
  r.get('/policies/:name/versions/:version', route(showPolicyVersion));
  r.get('/account/settings', route(getAccountSettings));
  r.put('/account/settings', route(updateAccountSettings));
  return r;
}
