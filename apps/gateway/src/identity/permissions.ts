import type { Role } from '../store/types';

/**
 * Single permissions a role grants (DESIGN §3). Owners and admins hold all of them; a member holds the defaults
 * below unless the account gives them a custom role, which then replaces the defaults with exactly its own set.
 */
export const permissionNames = [
  /** See the account's machines (those the person can reach). */
  'machines.view',
  /** Create join tokens to enroll new machines. */
  'machines.enroll',
  /** Rename and remove machines, and let groups claim them. */
  'machines.manage',
  /** Connect AI clients (OAuth connections) and create API tokens. */
  'clients.connect',
  /** Approve or deny tool calls that need a human. */
  'approvals.decide',
  /** Read the account's activity log. */
  'audit.read',
  /** Create and edit policies. */
  'policies.manage',
  /** Invite and remove members; change roles, custom roles and groups. */
  'members.manage',
] as const;

export type Permission = (typeof permissionNames)[number];

/** The permissions of each built-in role. */
export const rolePermissions: Record<Role, readonly Permission[]> = {
  owner: permissionNames,
  admin: permissionNames,
  member: ['machines.view', 'clients.connect'],
};

export function isPermission(name: string): name is Permission {
  return (permissionNames as readonly string[]).includes(name);
}

/** The permissions of a membership: its custom role's set if it has one, else its built-in role's. */
export function permissionsOf(role: Role, customPermissions: readonly string[] | null): ReadonlySet<Permission> {
  if (role === 'owner' || role === 'admin' || customPermissions === null) return new Set(rolePermissions[role]);
  return new Set(customPermissions.filter(isPermission));
}

/** Whether a signed-in person (or any holder of a permission set) may do `permission`. */
export function hasPermission(user: { permissions: ReadonlySet<string> }, permission: Permission): boolean {
  return user.permissions.has(permission);
}

/** Owners and admins reach every machine, whatever groups claim; everyone else only unclaimed ones and their groups'. */
export function seesEveryMachine(role: string): boolean {
  return role === 'owner' || role === 'admin';
}
