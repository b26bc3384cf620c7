import { z } from 'zod';
import { ApproverKind, Id, NamedRef, Timestamp } from './common';
import { endpoint } from './endpoint';
import { WebAuthnOptions } from './session';

export const approvalStatuses = ['pending', 'approved', 'denied', 'expired', 'used'] as const;
export const ApprovalStatus = z.enum(approvalStatuses);
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;

/** Why a human is needed: command rules that said `approve`, or the policy's `approval.tools`. */
export const ApprovalReason = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('command_rule'),
    rules: z.array(z.object({ command: z.array(z.string()), layer: z.string(), message: z.string() })),
  }),
  z.object({ kind: z.literal('policy_tool'), policy: z.string(), tool: z.string() }),
]);
export type ApprovalReason = z.infer<typeof ApprovalReason>;

/** An approval request as a signed-in person sees it. `args` are the bound arguments exactly as hashed. */
export const ApprovalView = z.object({
  id: Id,
  status: ApprovalStatus,
  tool: z.string(),
  machine: NamedRef,
  args: z.record(z.string(), z.unknown()),
  requester: NamedRef,
  client_name_declared: z.string().nullable(),
  reason: ApprovalReason,
  policy: z.string(),
  approvers: ApproverKind,
  asked: z.array(z.string()),
  created_at: Timestamp,
  expires_at: Timestamp,
  decided_at: Timestamp.nullable(),
  decided_by: z.string().nullable(),
  decided_with: z.enum(['passkey', 'totp', 'session']).nullable(),
  used_at: Timestamp.nullable(),
  /** The machine checks approvals itself: only a passkey can approve. */
  passkey_only: z.boolean(),
  passkey_only_reason: z.string().nullable(),
  /** Whether the viewer may decide it now, and if not, why. */
  can_decide: z.boolean(),
  why_not: z.string().nullable(),
});
export type ApprovalView = z.infer<typeof ApprovalView>;

export const ApprovalListRequest = z.object({
  status: ApprovalStatus.optional(),
  limit: z.number().int().min(1).max(200).optional(),
});
export type ApprovalListRequest = z.infer<typeof ApprovalListRequest>;

export const ApprovalListResponse = z.object({ approvals: z.array(ApprovalView) });
export type ApprovalListResponse = z.infer<typeof ApprovalListResponse>;

export const ApprovalResponse = z.object({ approval: ApprovalView });
export type ApprovalResponse = z.infer<typeof ApprovalResponse>;

/** A passkey approval's challenge (bound to the exact call) and the browser's options. */
export const ApprovalPasskeyOptionsResponse = z.object({ challenge: z.string().min(1), options: WebAuthnOptions });

/** Approving needs a fresh passkey assertion over the bound challenge, or an authenticator code. */
export const ApproveRequest = z.discriminatedUnion('method', [
  z.object({
    method: z.literal('passkey'),
    challenge: z.string().min(1).max(200),
    response: z.record(z.string(), z.unknown()),
  }),
  z.object({ method: z.literal('totp'), code: z.string().min(6).max(16) }),
]);
export type ApproveRequest = z.infer<typeof ApproveRequest>;

export const VapidKeyResponse = z.object({ public_key: z.string().min(1) });

/** A browser's push subscription (`PushSubscription.toJSON()`). */
export const PushSubscriptionRequest = z.object({
  endpoint: z.string().min(1).max(2048),
  keys: z.object({ p256dh: z.string(), auth: z.string() }),
});

export const approvalEndpoints = {
  list: endpoint({
    method: 'GET',
    path: '/api/approvals',
    request: ApprovalListRequest,
    response: ApprovalListResponse,
  }),
  get: endpoint({ method: 'GET', path: '/api/approvals/:id', response: ApprovalResponse }),
  passkeyOptions: endpoint({
    method: 'POST',
    path: '/api/approvals/:id/passkey-options',
    response: ApprovalPasskeyOptionsResponse,
  }),
  approve: endpoint({
    method: 'POST',
    path: '/api/approvals/:id/approve',
    request: ApproveRequest,
    response: ApprovalResponse,
  }),
  deny: endpoint({ method: 'POST', path: '/api/approvals/:id/deny', response: ApprovalResponse }),
};

export const pushEndpoints = {
  vapidPublicKey: endpoint({ method: 'GET', path: '/api/push/vapid-public-key', response: VapidKeyResponse }),
  subscribe: endpoint({
    method: 'POST',
    path: '/api/push/subscriptions',
    request: PushSubscriptionRequest,
    response: z.object({ id: Id }),
  }),
  unsubscribe: endpoint({
    method: 'DELETE',
    path: '/api/push/subscriptions',
    request: z.object({ endpoint: z.string().min(1).max(2048) }),
    response: z.object({ removed: z.boolean() }),
  }),
};
