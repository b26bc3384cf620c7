import { Hono } from 'hono';
import { renameMachine } from '../../machines/rename-machine';
import { reachableMachines } from '../../machines/resolve-machine';
import { baseTools, toolGroupLabels, toolGroupNames, toolGroups } from '../../oauth/scopes';
import { userRoute } from '../../services/adapters/rest';
import type { IdentityDeps } from '../op-context';
import { createEnrollment } from '../ops/create-enrollment';
import { inviteMember } from '../ops/invite-member';
import { createWebApiToken, revokeWebApiToken } from '../ops/manage-api-tokens';
import { customRoleView, deleteCustomRole, saveCustomRole } from '../ops/manage-custom-roles';
import { deleteGroup, groupView, saveGroup } from '../ops/manage-groups';
import { changeMemberRole, removeMember, revokeInvitation } from '../ops/manage-members';
import { listRedactionPatterns, setRedactionPatterns } from '../ops/manage-redaction-patterns';
import { hasPermission, permissionNames } from '../permissions';
import { identityRoutes, view } from './route-adapters';

/** The account's machines, members, invitations, roles, groups, API tokens and enrollment. */
export function accountRoutes(deps: IdentityDeps): Hono {
  const r = new Hono();
  const route = identityRoutes(deps);

  r.get(
    '/machines',
    route.user(
      view('listMachines', 'machines.view', async (ctx) => {
        const [machines, groups] = await Promise.all([
          reachableMachines(ctx.deps, ctx.actor.user),
          ctx.deps.identity.listGroups(ctx.actor.user.accountId),
        ]);
        const online = await ctx.deps.hub.online(machines.map((m) => m.id));
        return {
          machines: machines.map((m) => ({
            id: m.id,
            name: m.name,
            online: online.has(m.id),
            hostname: m.hostname,
            os: m.os,
            os_release: m.osRelease,
            arch: m.arch,
            agent_version: m.agentVersion,
            labels: m.labels,
            ceiling: m.ceiling,
            ceiling_source: m.ceilingSource,
            ceiling_error: m.ceilingError,
            last_seen_at: m.lastSeenAt,
            claimed_by: groups.filter((g) => g.machineIds.includes(m.id)).map((g) => ({ id: g.id, name: g.name })),
          })),
        };
      }),
    ),
  );
  r.post('/machines/enroll', route.user(createEnrollment));
  // Rename (machines.manage); the web app's machine page and `letkite admin machine rename` use the same service.
  r.patch('/machines/:id', userRoute(deps, renameMachine));

  r.get(
    '/members',
    route.user(
      view('listMembers', 'members.manage', async (ctx) => {
        const [members, invitations] = await Promise.all([
          ctx.deps.identity.listMembers(ctx.actor.user.accountId),
          ctx.deps.identity.listInvitations(ctx.actor.user.accountId),
        ]);
        const at = ctx.now.toISOString();
        return {
          members: members.map((m) => ({
            id: m.user.id,
            name: m.user.name,
            email: m.user.email,
            role: m.role,
            custom_role: m.customRole ? { id: m.customRole.id, name: m.customRole.name } : null,
            joined_at: m.createdAt,
            has_passkey: m.hasPasskey,
            has_password: m.hasPassword,
          })),
          invitations: invitations
            .filter((i) => i.acceptedAt === null && i.revokedAt === null && i.expiresAt > at)
            .map((i) => ({
              id: i.id,
              email: i.email,
              role: i.role,
              custom_role_id: i.customRoleId,
              expires_at: i.expiresAt,
            })),
        };
      }),
    ),
  );
  r.post('/invitations', route.user(inviteMember));
  r.delete('/invitations/:id', route.user(revokeInvitation));
  r.patch('/members/:user_id', route.user(changeMemberRole));
  r.delete('/members/:user_id', route.user(removeMember));

  r.get(
    '/roles',
    route.user(
      view('listCustomRoles', 'members.manage', async (ctx) => {
        const roles = await ctx.deps.identity.listCustomRoles(ctx.actor.user.accountId);
        return { permissions: permissionNames, roles: roles.map(customRoleView) };
      }),
    ),
  );
  r.post('/roles', route.user(saveCustomRole));
  r.put('/roles/:id', route.user(saveCustomRole));
  r.delete('/roles/:id', route.user(deleteCustomRole));

  r.get(
    '/groups',
    route.user(
      view('listGroups', 'members.manage', async (ctx) => {
        return { groups: (await ctx.deps.identity.listGroups(ctx.actor.user.accountId)).map(groupView) };
      }),
    ),
  );
  r.post('/groups', route.user(saveGroup));
  r.put('/groups/:id', route.user(saveGroup));
  r.delete('/groups/:id', route.user(deleteGroup));

  r.get(
    '/tokens',
    route.user(
      view('listApiTokens', undefined, async (ctx) => {
        const all = hasPermission(ctx.actor.user, 'members.manage');
        const tokens = await ctx.deps.identity.listApiTokens(
          ctx.actor.user.accountId,
          all ? null : ctx.actor.user.userId,
        );
        return {
          tokens: tokens.map((t) => ({
            id: t.id,
            name: t.name,
            user_id: t.userId,
            grant: t.grant,
            created_at: t.createdAt,
            expires_at: t.expiresAt,
            revoked_at: t.revokedAt,
            last_used_at: t.lastUsedAt,
          })),
        };
      }),
    ),
  );
  // The tool groups of DESIGN §7 (the OAuth scopes), so the tokens page offers the same choice as the consent page;
  // groups the account switched off are not offered at all (the token API refuses them too).
  r.get(
    '/tool-groups',
    route.user(
      view('listToolGroups', undefined, async (ctx) => {
        const off = new Set<string>((await ctx.deps.policies.settings(ctx.actor.user.accountId)).disabledToolGroups);
        return {
          base_tools: baseTools,
          groups: toolGroupNames
            .filter((name) => !off.has(name))
            .map((name) => ({ name, label: toolGroupLabels[name], tools: toolGroups[name] })),
        };
      }),
    ),
  );
  // The account's redaction patterns (DESIGN §7): masked in every output an AI reads and in the audit log.
  r.get('/redaction-patterns', route.user(listRedactionPatterns));
  r.put('/redaction-patterns', route.user(setRedactionPatterns));
  r.post('/tokens', route.user(createWebApiToken));
  r.delete('/tokens/:id', route.user(revokeWebApiToken));
  return r;
}
