/** An approval request as `GET /api/approvals/:id` returns it (apps/gateway/src/approvals/approval-view.ts). */
export interface ApprovalView {
  id: string;
  status: 'pending' | 'approved' | 'denied' | 'expired' | 'used';
  tool: string;
  machine: { id: string; name: string };
  args: Record<string, unknown>;
  requester: { id: string; name: string };
  client_name_declared: string | null;
  reason:
    | { kind: 'command_rule'; rules: { command: string[]; layer: string; message: string }[] }
    | { kind: 'policy_tool'; policy: string; tool: string };
  policy: string;
  approvers: 'connector' | 'any_admin' | 'four_eyes';
  asked: string[];
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  decided_with: 'passkey' | 'totp' | 'session' | null;
  used_at: string | null;
  /** The machine checks approvals itself: only a passkey can approve (no authenticator code). */
  passkey_only: boolean;
  passkey_only_reason: string | null;
  can_decide: boolean;
  why_not: string | null;
}

export const statusLabel: Record<ApprovalView['status'], string> = {
  pending: 'Waiting for a decision',
  approved: 'Approved (not used yet)',
  used: 'Approved and run',
  denied: 'Denied',
  expired: 'Expired',
};

/** "4 min 12 s" until `at`, or null once it is past. */
export function timeLeft(at: string, now: number): string | null {
  const ms = Date.parse(at) - now;
  if (ms <= 0) return null;
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h} h ${m} min`;
  return m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
}
