import type { ApproverKind } from '@letkite/policy';
import { and, type Column, eq, type SQL } from 'drizzle-orm';
import type {
  ApprovalBinding,
  ApprovalReason,
  ApprovalRequest,
  ApprovalStatus,
  ApprovalStore,
  PushSubscriptionRecord,
} from '../approvals/approval-store';
import type { AuditEventInput } from './types';

/**
 * The approvals domain's rows as both dialects read and write them (store/sqlite and store/postgres
 * approvals-schema.ts are twins, held by the drift test), and what both stores say about a request in the audit
 * log. The SQL, transactions and locking stay in each dialect's store.
 */

/** An `approval_requests` row: JSON kept as text, the passkey-only flag as 0/1 (as SQLite has it, on both). */
export interface ApprovalRequestRow {
  id: string;
  accountId: string;
  credentialId: string;
  requesterId: string;
  clientName: string | null;
  tool: string;
  machineId: string;
  machineName: string;
  args: string;
  argsHash: string;
  policyHash: string;
  policyName: string;
  reason: string;
  approvers: string;
  askedUserIds: string;
  status: string;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
  decidedBy: string | null;
  decidedWith: string | null;
  usedAt: string | null;
  proofBinding: string | null;
  passkeyOnly: number;
  assertion: string | null;
}

export function approvalFromRow(r: ApprovalRequestRow): ApprovalRequest {
  return {
    id: r.id,
    accountId: r.accountId,
    credentialId: r.credentialId,
    requesterId: r.requesterId,
    clientName: r.clientName,
    tool: r.tool,
    machineId: r.machineId,
    machineName: r.machineName,
    args: r.args,
    argsHash: r.argsHash,
    policyHash: r.policyHash,
    policyName: r.policyName,
    reason: JSON.parse(r.reason) as ApprovalReason,
    approvers: r.approvers as ApproverKind,
    askedUserIds: JSON.parse(r.askedUserIds) as string[],
    status: r.status as ApprovalStatus,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    decidedAt: r.decidedAt,
    decidedBy: r.decidedBy,
    decidedWith: r.decidedWith as ApprovalRequest['decidedWith'],
    usedAt: r.usedAt,
    proofBinding: r.proofBinding,
    passkeyOnly: r.passkeyOnly === 1,
    assertion: r.assertion,
  };
}

export function approvalToRow(a: ApprovalRequest): ApprovalRequestRow {
  return {
    ...a,
    reason: JSON.stringify(a.reason),
    askedUserIds: JSON.stringify(a.askedUserIds),
    passkeyOnly: a.passkeyOnly ? 1 : 0,
  };
}

/** The columns a decision writes on its request. */
export function decisionToRow(
  decision: Parameters<ApprovalStore['decide']>[1],
): Pick<ApprovalRequestRow, 'status' | 'decidedAt' | 'decidedBy' | 'decidedWith' | 'assertion'> {
  return {
    status: decision.status,
    decidedAt: decision.at,
    decidedBy: decision.by,
    decidedWith: decision.with,
    assertion: decision.assertion ?? null,
  };
}

/** A `push_subscriptions` row without its delivery counters, which stay in the store. */
export function pushSubscriptionFromRow(r: PushSubscriptionRecord): PushSubscriptionRecord {
  return {
    id: r.id,
    accountId: r.accountId,
    userId: r.userId,
    endpoint: r.endpoint,
    p256dh: r.p256dh,
    auth: r.auth,
    userAgent: r.userAgent,
    createdAt: r.createdAt,
  };
}

/** The binding's five columns of either dialect's `approval_requests` table. */
export interface BindingColumns {
  credentialId: Column;
  tool: Column;
  machineId: Column;
  argsHash: Column;
  policyHash: Column;
}

/** The requests of one binding: the identical call, through the same connection, under the same policy. */
export function sameBinding(t: BindingColumns, b: ApprovalBinding): SQL | undefined {
  return and(
    eq(t.credentialId, b.credentialId),
    eq(t.tool, b.tool),
    eq(t.machineId, b.machineId),
    eq(t.argsHash, b.argsHash),
    eq(t.policyHash, b.policyHash),
  );
}

/** What the audit log says about a request (never the arguments themselves: they may hold secrets). */
export function requestDetails(a: ApprovalRequest): Record<string, unknown> {
  return {
    tool: a.tool,
    machine_id: a.machineId,
    credential_id: a.credentialId,
    args_sha256: a.argsHash,
    policy_sha256: a.policyHash,
  };
}

/** The audit event of a gate asking for `candidate` at `now`, in the transaction that stores it. */
export function requestAudit(candidate: ApprovalRequest, now: string): AuditEventInput {
  return {
    accountId: candidate.accountId,
    at: now,
    actor: `token:${candidate.credentialId}`,
    action: 'approval.request',
    target: candidate.id,
    outcome: 'ok',
    details: {
      ...requestDetails(candidate),
      approvers: candidate.approvers,
      asked: candidate.askedUserIds,
      expires_at: candidate.expiresAt,
    },
  };
}

/** The audit event of a gate using up the approved request `approved` at `now`. */
export function useAudit(approved: ApprovalRequest, now: string): AuditEventInput {
  return {
    accountId: approved.accountId,
    at: now,
    actor: `token:${approved.credentialId}`,
    action: 'approval.use',
    target: approved.id,
    outcome: 'ok',
    details: requestDetails(approved),
  };
}

/** The audit event of the system expiring `r` (pending or approved before, as `r.status` says) at `now`. */
export function expireAudit(r: ApprovalRequest, now: string): AuditEventInput {
  return {
    accountId: r.accountId,
    at: now,
    actor: 'system',
    action: 'approval.expire',
    target: r.id,
    outcome: 'ok',
    details: { ...requestDetails(r), was: r.status },
  };
}

/** A decision's audit event, with what it says about every request ahead of the caller's own details. */
export function decisionAudit(r: ApprovalRequest, event: AuditEventInput): AuditEventInput {
  return { ...event, details: { ...requestDetails(r), ...event.details } };
}
