import { ApprovalBinding, LetKiteError } from '@letkite/protocol';
import type { SignedInUser } from '../identity/current-user';
import type { IdentityStore } from '../identity/identity-store';
import type { Store } from '../store/types';
import type { ApprovalRequest, ApprovalStore } from './approval-store';
import { approverCandidates } from './approver-directory';
import { whyNotApprover } from './approvers';
import { pinsApprovers } from './gate';

/** An approval request as the web app shows it to a signed-in person. */
export interface ApprovalView {
  id: string;
  status: ApprovalRequest['status'];
  tool: string;
  machine: { id: string; name: string };
  /** The bound arguments exactly as hashed (machine and confirm are not bound). */
  args: Record<string, unknown>;
  requester: { id: string; name: string };
  /** What the MCP client called itself; never verified. */
  client_name_declared: string | null;
  reason: ApprovalRequest['reason'];
  policy: string;
  approvers: ApprovalRequest['approvers'];
  asked: string[];
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  decided_with: ApprovalRequest['decidedWith'];
  used_at: string | null;
  /**
   * Only a passkey can approve this: the machine verifies approvals itself (its ceiling pins approvers, or a
   * ceiling rule asks for the approval), and a TOTP code is something no machine can check. `passkey_only_reason`
   * says so for the page.
   */
  passkey_only: boolean;
  passkey_only_reason: string | null;
  /** Whether the viewer may decide it now, and if not, why. */
  can_decide: boolean;
  why_not: string | null;
}

export interface ViewDeps {
  store: Store;
  identity: IdentityStore;
  approvals: { store: ApprovalStore };
  now: () => Date;
}

/**
 * Loads a request for a signed-in person. Only members of its account who could decide it, the requester, and
 * people holding approvals.decide may see it; to anyone else it does not exist.
 */
export async function loadApprovalFor(
  deps: ViewDeps,
  user: SignedInUser,
  id: string,
): Promise<{ request: ApprovalRequest; whyNot: string | null }> {
  await deps.approvals.store.expireDue(deps.now().toISOString());
  const request = await deps.approvals.store.get(id);
  if (!request || request.accountId !== user.accountId) throw new LetKiteError('not_found', `no approval "${id}"`);
  const members = await approverCandidates(deps.identity, request.accountId);
  const whyNot = whyNotApprover(request.approvers, request.requesterId, user.userId, members);
  const mayView = whyNot === null || request.requesterId === user.userId || user.permissions.has('approvals.decide');
  if (!mayView) throw new LetKiteError('not_found', `no approval "${id}"`);
  return { request, whyNot };
}

/**
 * Whether only a passkey can approve `r` now: it was made so, or one of the machines it binds has pinned approvers
 * since (their agents would refuse anything else).
 */
export async function isPasskeyOnly(deps: Pick<ViewDeps, 'store'>, r: ApprovalRequest): Promise<boolean> {
  if (r.passkeyOnly) return true;
  if (r.proofBinding === null) return false;
  const binding = ApprovalBinding.safeParse(JSON.parse(r.proofBinding));
  if (!binding.success) return false;
  for (const t of binding.data.targets) {
    const machine = await deps.store.getMachine(t.machine_id);
    if (machine && pinsApprovers(machine)) return true;
  }
  return false;
}

export async function viewOf(deps: ViewDeps, r: ApprovalRequest, whyNot: string | null): Promise<ApprovalView> {
  const names = new Map<string, string>();
  for (const id of new Set([r.requesterId, ...r.askedUserIds, ...(r.decidedBy ? [r.decidedBy] : [])])) {
    names.set(id, (await deps.store.getUser(id))?.name ?? id);
  }
  const live = r.status === 'pending' && Date.parse(r.expiresAt) > deps.now().getTime();
  const passkeyOnly = await isPasskeyOnly(deps, r);
  return {
    id: r.id,
    status: r.status,
    tool: r.tool,
    machine: { id: r.machineId, name: r.machineName },
    args: JSON.parse(r.args) as Record<string, unknown>,
    requester: { id: r.requesterId, name: names.get(r.requesterId) ?? r.requesterId },
    client_name_declared: r.clientName,
    reason: r.reason,
    policy: r.policyName,
    approvers: r.approvers,
    asked: r.askedUserIds.map((id) => names.get(id) ?? id),
    created_at: r.createdAt,
    expires_at: r.expiresAt,
    decided_at: r.decidedAt,
    decided_by: r.decidedBy ? (names.get(r.decidedBy) ?? r.decidedBy) : null,
    decided_with: r.decidedWith,
    used_at: r.usedAt,
    passkey_only: passkeyOnly,
    passkey_only_reason: passkeyOnly
      ? `"${r.machineName}" checks approvals itself, against the passkeys pinned in its ceiling. An authenticator code cannot be checked by a machine, so approve with your passkey.`
      : null,
    can_decide: live && whyNot === null,
    why_not: live ? whyNot : `the request is ${r.status === 'pending' ? 'expired' : r.status}`,
  };
}
