import type { IdentityStore } from '../identity/identity-store';
import { permissionsOf } from '../identity/permissions';
import type { User } from '../store/types';
import type { ApproverCandidate } from './approvers';

/** The account's current members as approver candidates (role and permissions as of now). */
export async function approverCandidates(
  identity: IdentityStore,
  accountId: string,
): Promise<(ApproverCandidate & { user: User })[]> {
  const members = await identity.listMembers(accountId);
  return members.map((m) => ({
    userId: m.user.id,
    role: m.role,
    permissions: permissionsOf(m.role, m.customRole?.permissions ?? null),
    user: m.user,
  }));
}
