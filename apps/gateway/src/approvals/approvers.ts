import type { ApproverKind } from '@letkite/policy';

/** A member of the account as approver resolution sees them. */
export interface ApproverCandidate {
  userId: string;
  /** The built-in role: owner | admin | member. */
  role: string;
  permissions: ReadonlySet<string>;
}

const isAdmin = (c: ApproverCandidate) => c.role === 'owner' || c.role === 'admin';

/**
 * Who may decide a request made through a connection of `requesterId` (DESIGN §6), among the account's current
 * members:
 * - `connector`: the person who connected the AI, and every owner and admin;
 * - `any_admin`: every owner and admin;
 * - `four_eyes`: everyone holding `approvals.decide` except the requester — nobody approves their own request.
 */
export function eligibleApprovers(
  kind: ApproverKind,
  requesterId: string,
  members: readonly ApproverCandidate[],
): ApproverCandidate[] {
  switch (kind) {
    case 'connector':
      return members.filter((m) => m.userId === requesterId || isAdmin(m));
    case 'any_admin':
      return members.filter(isAdmin);
    case 'four_eyes':
      return members.filter((m) => m.userId !== requesterId && m.permissions.has('approvals.decide'));
  }
}

/** Why `userId` may not decide (a short reason for the page and the error), or null when they may. */
export function whyNotApprover(
  kind: ApproverKind,
  requesterId: string,
  userId: string,
  members: readonly ApproverCandidate[],
): string | null {
  if (eligibleApprovers(kind, requesterId, members).some((m) => m.userId === userId)) return null;
  if (kind === 'four_eyes' && userId === requesterId) {
    return 'four-eyes approval: the person whose AI asked cannot approve it';
  }
  if (kind === 'four_eyes') return 'four-eyes approval needs the approvals.decide permission';
  if (kind === 'any_admin') return 'only owners and admins may decide this request';
  return 'only the person who connected the AI, owners and admins may decide this request';
}
