import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { hashSecret, newSecret } from '../auth/secrets';
import type { SignedInUser } from '../identity/current-user';
import { hasPermission, seesEveryMachine } from '../identity/permissions';
import { reachableMachines } from '../machines/resolve-machine';
import { choosablePolicies, choosePolicy } from '../policies/choosable-policies';
import type { Grant } from '../store/types';
import type { AuthorizationRequest } from './authorization-request';
import type { OAuthContext } from './oauth-deps';
import { formatScope, toolGroupNames, toolsOfGroups } from './scopes';
import { AUTHORIZATION_CODE_TTL_MS, issuerOf } from './tokens';

/** What the person chose on the consent page. */
export const ConsentDecision = z.object({
  /** Tool groups (OAuth scopes) the client may use. */
  groups: z.array(z.enum(toolGroupNames as [string, ...string[]])).max(toolGroupNames.length),
  /** Every machine the person reaches, chosen ones, or the machines one of their groups claims. */
  machines: z.union([
    z.object({ kind: z.literal('all') }),
    z.object({ kind: z.literal('chosen'), ids: z.array(z.string().max(100)).min(1).max(1000) }),
    z.object({ kind: z.literal('group'), group_id: z.string().max(100) }),
  ]),
  /** A built-in or account policy by name (the grant stores the name: edits apply to the next call). */
  policy: z.string().max(100),
});
export type ConsentDecision = z.infer<typeof ConsentDecision>;

/** The machine part of a grant, checked against what the person reaches now: a connection never exceeds them. */
async function grantedMachines(
  ctx: Pick<OAuthContext, 'store' | 'identity'>,
  user: SignedInUser,
  choice: ConsentDecision['machines'],
): Promise<Grant['machines']> {
  // `all` stays `*`: it means "whatever I reach", and group claims are re-checked on every call.
  if (choice.kind === 'all') return '*';
  const reachable = new Set((await reachableMachines(ctx, user)).map((m) => m.id));
  if (choice.kind === 'chosen') {
    const outside = choice.ids.filter((id) => !reachable.has(id));
    if (outside.length > 0) {
      throw new LetKiteError('forbidden', `machine "${outside[0]}" is not one you can reach`, { machines: outside });
    }
    return [...new Set(choice.ids)];
  }
  const group = await ctx.identity.getGroup(user.accountId, choice.group_id);
  if (!group || (!group.memberIds.includes(user.userId) && !seesEveryMachine(user.role))) {
    throw new LetKiteError('forbidden', `you are not in group "${choice.group_id}"`);
  }
  // The group's machines as they are now; a machine the group claims later is not added to this connection.
  return group.machineIds.filter((id) => reachable.has(id));
}

/**
 * The person approves a client: checks they may connect clients, clamps the chosen machines to theirs, and
 * issues a one-time authorization code bound to the client, redirect URI, PKCE challenge and resource. The
 * connection itself is created when the client redeems the code.
 */
export async function approveAuthorization(
  ctx: Pick<OAuthContext, 'store' | 'identity' | 'policies' | 'oauth' | 'now' | 'publicUrl'>,
  user: SignedInUser,
  request: AuthorizationRequest,
  input: unknown,
): Promise<{ redirectTo: string; grant: Grant }> {
  if (!hasPermission(user, 'clients.connect')) {
    throw new LetKiteError('forbidden', 'your role does not allow connecting AI clients', {
      permission: 'clients.connect',
    });
  }
  const parsed = ConsentDecision.safeParse(input);
  if (!parsed.success) {
    throw new LetKiteError('invalid_params', `invalid consent: ${z.prettifyError(parsed.error)}`);
  }
  const decision = parsed.data;
  const policy = choosePolicy(await choosablePolicies(ctx.policies, user.accountId), decision.policy);
  // Only groups the chosen policy can use and the account allows: a group it can never use would be a scope the
  // client believes it has (RFC 6749 §3.3 lets the server grant less than asked).
  const groups = toolGroupNames.filter((g) => decision.groups.includes(g) && policy.toolGroups.includes(g));
  const grant: Grant = {
    policy: decision.policy,
    machines: await grantedMachines(ctx, user, decision.machines),
    scopes: toolsOfGroups(groups),
  };
  const now = ctx.now();
  const code = newSecret('lkc_');
  await ctx.oauth.store.createAuthorizationCode(
    hashSecret(code),
    {
      accountId: user.accountId,
      userId: user.userId,
      clientId: request.client.clientId,
      clientName: request.client.metadata.client_name ?? null,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      groups,
      grant,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_MS).toISOString(),
    },
    {
      accountId: user.accountId,
      at: now.toISOString(),
      actor: `user:${user.userId}`,
      action: 'oauth.consent',
      target: request.client.clientId,
      outcome: 'ok',
      details: {
        client_name: request.client.metadata.client_name ?? null,
        redirect_uri: request.redirectUri,
        scope: formatScope(groups),
        grant,
      },
    },
  );
  const url = new URL(request.redirectUri);
  url.searchParams.set('code', code);
  if (request.state !== undefined) url.searchParams.set('state', request.state);
  url.searchParams.set('iss', issuerOf(ctx.publicUrl));
  return { redirectTo: url.href, grant };
}
