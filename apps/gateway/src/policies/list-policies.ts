import { z } from 'zod';
import { defineService } from '../services/define-service';
import type { ServiceContext } from '../services/service-context';
import { builtinViews, type PolicyDeps, storedView } from './policy-views';

/** The account's policies: the built-ins first (read-only), then its own by name. Anyone who connects clients may list them. */
export const listPolicies = defineService({
  name: 'policies.list',
  input: z.object({}),
  permission: 'clients.connect',
  async run(ctx: ServiceContext<PolicyDeps>) {
    const stored = await ctx.deps.policies.list(accountOf(ctx));
    return { policies: [...builtinViews(), ...stored.map(storedView)] };
  },
});

/** The account an operation acts in (every policy operation has one). */
export function accountOf(ctx: Pick<ServiceContext<unknown>, 'account'>): string {
  if (ctx.account === null) throw new TypeError('a policy operation needs an account');
  return ctx.account;
}
