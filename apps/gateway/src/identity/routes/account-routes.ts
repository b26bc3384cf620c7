import { Hono } from 'hono';
import { reachableMachines } from '../../machines/resolve-machine';
import { baseTools, toolGroupLabels, toolGroupNames, toolGroups } from '../../oauth/scopes';
import { type IdentityDeps, requirePermission } from '../op-context';
import { createEnrollment } from '../ops/create-enrollment';
import { inviteMember } from '../ops/invite-member';
import { createWebApiToken, revokeWebApiToken } from '../ops/manage-api-tokens';
import { customRoleView, deleteCustomRole, saveCustomRole } from '../ops/manage-custom-roles';
import { deleteGroup, groupView, saveGroup } from '../ops/manage-groups';
import { changeMemberRole, removeMember, revokeInvitation } from '../ops/manage-members';
import { listRedactionPatterns, setRedactionPatterns } from '../ops/manage-redaction-patterns';
import { hasPermission, permissionNames } from '../permissions';
import { userOp } from './route-adapters';

/** The account's machines, members, invitations, roles, groups, API tokens and enrollment. */
export function accountRoutes(deps: IdentityDeps): Hono {
  const r = new Hono();

  r.get(
    '/machines',
    userOp(deps, async (ctx) => {
      requirePermission(ctx.user, 'machines.view');
      const [machines, groups] = await Promise.all([
        reachableMachines(ctx.deps, ctx.user),
        ctx.deps.identity.listGroups(ctx.user.accountId),
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
  );
  r.post('/machines/enroll', userOp(deps, createEnrollment));

  r.get(
    '/members',
    userOp(deps, async (ctx) => {
      requirePermission(ctx.user, 'members.manage');
      const [members, invitations] = await Promise.all([
        ctx.deps.identity.listMembers(ctx.user.accountId),
        ctx.deps.identity.listInvitations(ctx.user.accountId),
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
  );
  r.post('/invitations', userOp(deps, inviteMember));
  r.delete('/invitations/:id', userOp(deps, revokeInvitation));
  r.patch('/members/:user_id', userOp(deps, changeMemberRole));
  r.delete('/members/:user_id', userOp(deps, removeMember));

  r.get(
    '/roles',
    userOp(deps, async (ctx) => {
      requirePermission(ctx.user, 'members.manage');
      const roles = await ctx.deps.identity.listCustomRoles(ctx.user.accountId);
      return { permissions: permissionNames, roles: roles.map(customRoleView) };
    }),
  );
  r.post('/roles', userOp(deps, saveCustomRole));
  r.put('/roles/:id', userOp(deps, saveCustomRole));
  r.delete('/roles/:id', userOp(deps, deleteCustomRole));

  r.get(
    '/groups',
    userOp(deps, async (ctx) => {
      requirePermission(ctx.user, 'members.manage');
      return { groups: (await ctx.deps.identity.listGroups(ctx.user.accountId)).map(groupView) };
    }),
  );
  r.post('/groups', userOp(deps, saveGroup));
  r.put('/groups/:id', userOp(deps, saveGroup));
  r.delete('/groups/:id', userOp(deps, deleteGroup));

  r.get(
    '/tokens',
    userOp(deps, async (ctx) => {
      const all = hasPermission(ctx.user, 'members.manage');
      const tokens = await ctx.deps.identity.listApiTokens(ctx.user.accountId, all ? null : ctx.user.userId);
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
  );
  // The tool groups of DESIGN §7 (the OAuth scopes), so the tokens page offers the same choice as the consent page.
  r.get(
    '/tool-groups',
    userOp(deps, async () => ({
      base_tools: baseTools,
      groups: toolGroupNames.map((name) => ({ name, label: toolGroupLabels[name], tools: toolGroups[name] })),
    })),
  );
  // The account's redaction patterns (DESIGN §7): masked in every output an AI reads and in the audit log.
  r.get('/redaction-patterns', userOp(deps, listRedactionPatterns));
  r.put('/redaction-patterns', userOp(deps, setRedactionPatterns));
  r.post('/tokens', userOp(deps, createWebApiToken));
  r.delete('/tokens/:id', userOp(deps, revokeWebApiToken));
  return r;
}
