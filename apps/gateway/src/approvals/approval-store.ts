import type { ApproverKind } from '@letkite/policy';
import type { AuditEventInput } from '../store/types';

/**
 * The approvals domain's store (docs/design/store-domains.md). Handlers depend on this interface; SQLite implements
 * it in `store/sqlite/sqlite-approval-store.ts`. Every state change writes its audit event in the same transaction.
 */

export const approvalStatuses = ['pending', 'approved', 'denied', 'expired', 'used'] as const;
export type ApprovalStatus = (typeof approvalStatuses)[number];

/** What an approval is bound to: the identical call, through the same connection, under the same policy. */
export interface ApprovalBinding {
  credentialId: string;
  tool: string;
  machineId: string;
  argsHash: string;
  policyHash: string;
}

/** Why a human is needed: a command rule's `approve` verdict, or the policy's `approval.tools`. */
export type ApprovalReason =
  | { kind: 'command_rule'; rules: { command: string[]; layer: string; message: string }[] }
  | { kind: 'policy_tool'; policy: string; tool: string };

export interface ApprovalRequest extends ApprovalBinding {
  id: string;
  accountId: string;
  requesterId: string;
  clientName: string | null;
  machineName: string;
  /** The canonical JSON that was hashed; shown to the approver exactly. */
  args: string;
  policyName: string;
  reason: ApprovalReason;
  approvers: ApproverKind;
  askedUserIds: string[];
  status: ApprovalStatus;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
  decidedBy: string | null;
  decidedWith: 'passkey' | 'totp' | 'session' | null;
  usedAt: string | null;
  /** Canonical JSON of the `ApprovalBinding` a passkey signs (null when the call runs on no agent). */
  proofBinding: string | null;
  /** A target machine verifies approvals itself: passkey only (TOTP cannot be checked by a machine). */
  passkeyOnly: boolean;
  /** The approving passkey assertion (`ApprovalAssertion`, JSON), kept to prove the approval to the machine. */
  assertion: string | null;
}

/** What the gate finds for a call, decided atomically. */
export type GateOutcome =
  | { kind: 'consumed'; request: ApprovalRequest }
  | { kind: 'denied'; request: ApprovalRequest }
  | { kind: 'pending'; request: ApprovalRequest; created: boolean; previous: ApprovalRequest | null }
  | { kind: 'too_many'; pending: number };

export interface PushSubscriptionRecord {
  id: string;
  accountId: string;
  userId: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  userAgent: string | null;
  createdAt: string;
}

export interface ApprovalStore {
  /**
   * One transaction: expire what is due, then for this binding use an approved request (→ consumed, exactly once
   * even when identical calls race), else report a denial, else reuse a pending request, else create `candidate`
   * unless the connection already has `maxPending` pending requests.
   */
  gate(binding: ApprovalBinding, candidate: ApprovalRequest, maxPending: number, now: string): Promise<GateOutcome>;
  get(id: string): Promise<ApprovalRequest | null>;
  list(accountId: string, options: { status?: ApprovalStatus; limit: number }): Promise<ApprovalRequest[]>;
  /**
   * pending → approved | denied, only while pending and not expired. Returns the updated request, or null when it
   * was no longer pending (decided meanwhile, or expired).
   */
  decide(
    id: string,
    decision: {
      status: 'approved' | 'denied';
      by: string;
      with: 'passkey' | 'totp' | 'session';
      at: string;
      /** The passkey assertion that approved it (stored with the request). */
      assertion?: string | null;
    },
    audit: AuditEventInput,
  ): Promise<ApprovalRequest | null>;
  /**
   * Marks pending and approved requests past their expiry as expired (kept as history); returns the ones this call
   * expired, each request once however many gateways sweep at once (the caller announces exactly these).
   */
  expireDue(now: string): Promise<ApprovalRequest[]>;

  /** Stores a passkey challenge bound to one approval and one approver. */
  putChallenge(c: {
    challenge: string;
    approvalId: string;
    userId: string;
    createdAt: string;
    expiresAt: string;
  }): Promise<void>;
  /** Uses up a challenge; false when unknown, used, expired or bound to another approval or person. */
  takeChallenge(challenge: string, approvalId: string, userId: string, now: string): Promise<boolean>;

  savePushSubscription(sub: PushSubscriptionRecord, audit: AuditEventInput): Promise<PushSubscriptionRecord>;
  deletePushSubscription(userId: string, endpoint: string, audit: AuditEventInput): Promise<boolean>;
  pushSubscriptionsOf(userIds: string[]): Promise<PushSubscriptionRecord[]>;
  /** Records a delivery result; a subscription the push service calls gone (404/410) is removed. */
  recordPushResult(id: string, result: 'ok' | 'failed' | 'gone', at: string): Promise<void>;

  /** The gateway's VAPID key pair, created by `create` on first use and kept from then on. */
  vapidKeys(
    create: () => { publicKey: string; privateKey: string },
    now: string,
  ): Promise<{ publicKey: string; privateKey: string }>;
}
