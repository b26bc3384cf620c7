import { LetKiteError } from '@letkite/protocol';
import type {
  Challenge,
  CustomRole,
  Group,
  Invitation,
  MembershipView,
  MemberView,
  SessionMethod,
  StoredPasskey,
  WebSession,
} from '../identity/identity-store';
import type { ApiToken, Grant, Role, User } from './types';

/**
 * The identity domain's rows as both dialects read and write them (store/sqlite and store/postgres
 * identity-schema.ts are twins, held by the drift test): JSON kept as text, enums as text. Also the errors both
 * stores raise and the shaping of group and claim lists. The SQL, transactions and locking stay in each dialect.
 */

/** A `passkeys` row. */
export interface PasskeyRow extends Omit<StoredPasskey, 'transports'> {
  transports: string;
}

/** A `web_sessions` row: the session plus the hash of its cookie token, which never leaves the store. */
export interface SessionRow extends Omit<WebSession, 'method'> {
  method: string;
  tokenHash: string;
}

/** A `custom_roles` row. */
export interface CustomRoleRow extends Omit<CustomRole, 'permissions'> {
  permissions: string;
}

/** An `invitations` row, as far as an Invitation reads it. */
export interface InvitationRow extends Omit<Invitation, 'role'> {
  role: string;
}

/** An `api_tokens` row, as far as the token list reads it. */
export interface ApiTokenRow extends Omit<ApiToken, 'grant'> {
  grant: string;
  lastUsedAt: string | null;
}

export function passkeyFromRow(r: PasskeyRow): StoredPasskey {
  return { ...r, transports: JSON.parse(r.transports) as string[] };
}

export function passkeyToRow(p: StoredPasskey): PasskeyRow {
  return { ...p, transports: JSON.stringify(p.transports) };
}

export function sessionFromRow(r: SessionRow): WebSession {
  const { tokenHash: _hash, ...rest } = r;
  return { ...rest, method: rest.method as SessionMethod };
}

export function roleFromRow(r: CustomRoleRow): CustomRole {
  return { ...r, permissions: JSON.parse(r.permissions) as string[] };
}

export function roleToRow(role: CustomRole): CustomRoleRow {
  return { ...role, permissions: JSON.stringify(role.permissions) };
}

/** A left-joined custom role: null when the member has none (every column of the join is null then). */
export function joinedRole(r: CustomRoleRow | null): CustomRole | null {
  return r?.id ? roleFromRow(r) : null;
}

export function invitationFromRow(r: InvitationRow): Invitation {
  return {
    id: r.id,
    accountId: r.accountId,
    email: r.email,
    role: r.role as Role,
    customRoleId: r.customRoleId,
    invitedBy: r.invitedBy,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    acceptedAt: r.acceptedAt,
    revokedAt: r.revokedAt,
  };
}

/** An `auth_challenges` row's challenge, its value as stored (a seed challenge's still sealed). */
export function challengeFromRow(r: Challenge): Challenge {
  return { id: r.id, purpose: r.purpose, subject: r.subject, value: r.value, expiresAt: r.expiresAt };
}

/** An `api_tokens` row as the token a bearer presents (both dialects' core stores authenticate with it). */
export function apiTokenFromRow(r: Omit<ApiTokenRow, 'lastUsedAt'>): ApiToken {
  return {
    id: r.id,
    accountId: r.accountId,
    userId: r.userId,
    name: r.name,
    grant: JSON.parse(r.grant) as Grant,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    revokedAt: r.revokedAt,
  };
}

/** An `api_tokens` row as a token list shows it: the token and when it was last used. */
export function listedApiTokenFromRow(r: ApiTokenRow): ApiToken & { lastUsedAt: string | null } {
  return { ...apiTokenFromRow(r), lastUsedAt: r.lastUsedAt };
}

/** One row of a membership query: the membership, its account's name and its left-joined custom role. */
export function membershipFromRow(
  userId: string,
  r: { m: { accountId: string; role: string }; accountName: string; role: CustomRoleRow | null },
): MembershipView {
  return {
    accountId: r.m.accountId,
    accountName: r.accountName,
    userId,
    role: r.m.role as Role,
    customRole: joinedRole(r.role),
  };
}

/** One row of the member list; each dialect reads its EXISTS flags as it returns them (0/1 or boolean). */
export function memberFromRow(r: {
  m: { role: string; createdAt: string };
  u: User;
  role: CustomRoleRow | null;
  hasPasskey: boolean;
  hasPassword: boolean;
}): MemberView {
  return {
    user: r.u,
    role: r.m.role as Role,
    customRole: joinedRole(r.role),
    createdAt: r.m.createdAt,
    hasPasskey: r.hasPasskey,
    hasPassword: r.hasPassword,
  };
}

/** Groups (in the order given) with their members and machine claims, from the three tables' rows. */
export function groupsFromRows(
  rows: Omit<Group, 'memberIds' | 'machineIds'>[],
  members: { groupId: string; userId: string }[],
  claims: { groupId: string; machineId: string }[],
): Group[] {
  return rows.map((r) => ({
    ...r,
    memberIds: members.filter((m) => m.groupId === r.id).map((m) => m.userId),
    machineIds: claims.filter((m) => m.groupId === r.id).map((m) => m.machineId),
  }));
}

/** Machine id → the ids of the groups that claim it. */
export function claimsByMachine(rows: { groupId: string; machineId: string }[]): Map<string, string[]> {
  const claims = new Map<string, string[]>();
  for (const r of rows) claims.set(r.machineId, [...(claims.get(r.machineId) ?? []), r.groupId]);
  return claims;
}

/**
 * The `recovery_codes` rows of a new set. The id is derived the same way on both dialects, so a set written by
 * one reads the same on the other.
 */
export function recoveryCodeRows(
  userId: string,
  hashes: string[],
): { id: string; userId: string; codeHash: string; usedAt: null }[] {
  return hashes.map((codeHash, i) => ({
    id: `${userId}:${i}:${codeHash.slice(0, 8)}`,
    userId,
    codeHash,
    usedAt: null,
  }));
}

/** A demotion or removal that matched nothing although the member exists: it was the last owner. */
export function lastOwnerConflict(): LetKiteError {
  return new LetKiteError('conflict', 'the account needs at least one owner');
}

/**
 * Thrown inside completeOnboarding's transaction (so the invitation stays unused) when the membership insert finds
 * the person already in the account: two invitations accepted at once, or a role given meanwhile, must not let the
 * later one overwrite the role. The setup link's owner row already exists (bootstrap) and is kept as it is.
 */
export function joinedAlready(): LetKiteError {
  return new LetKiteError('conflict', 'you are already a member of this account');
}
