import { randomBytes } from 'node:crypto';
import type { CommandJudgement } from '@letkite/ceiling';
import type { Policy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import type { ToolCallContext } from '../mcp/tool-handler';
import type { Machine } from '../store/types';
import type { ApprovalReason, ApprovalRequest } from './approval-store';
import { MAX_PENDING_PER_CONNECTION } from './approvals';
import { approverCandidates } from './approver-directory';
import { eligibleApprovers } from './approvers';
import { boundArguments, machineSetId, policyVersion } from './canonical-args';
import { approvalExpiresAt } from './expiry';
import { approvalPath } from './notify-approvers';
import { PendingApprovalAnswer } from './pending-answer';

/**
 * What an approval is for: one resolved machine, or — for a call that runs on several (exec_many) — the
 * canonical set of them (`machineSetTarget`). Its id is part of the binding; its name is shown to the approver.
 */
export type ApprovalTarget = Pick<Machine, 'id' | 'name'>;

/**
 * One approval target for a call on several machines: the id is the canonical id of the machine set (the same for
 * any order and spelling of the same machines, different for any other set), the name lists the machines' names.
 */
export function machineSetTarget(machines: readonly Pick<Machine, 'id' | 'name'>[]): ApprovalTarget {
  if (machines.length === 0) throw new TypeError('a machine set needs at least one machine');
  const names = [...new Set(machines.map((m) => m.name))].sort();
  const ids = new Set(machines.map((m) => m.id));
  return { id: machineSetId([...ids]), name: `${ids.size} machine${ids.size === 1 ? '' : 's'}: ${names.join(', ')}` };
}

/** One gated call, as the tool handler knows it after its own checks passed. */
export interface GatedCall {
  /** The MCP tool name (part of the binding). */
  tool: string;
  /** The resolved machine, or the machine set of a call on several machines (its id is part of the binding). */
  machine: ApprovalTarget;
  /** The caller's resolved policy: its hash is the binding's policy version, its `approval` the settings used. */
  policy: Policy;
  /** The validated tool input; everything but `machine` and `confirm` is bound (see canonical-args.ts). */
  args: Record<string, unknown>;
  /** Why a human is needed (shown on the approval page). */
  reason: ApprovalReason;
}

/** Why a call needs a human because of its command verdict (`approve`), or null. */
export function commandRuleReason(judgement: CommandJudgement): ApprovalReason | null {
  if (judgement.verdict !== 'approve') return null;
  return {
    kind: 'command_rule',
    rules: judgement.reasons
      .filter((r) => r.verdict === 'approve')
      .map((r) => ({ command: r.command, layer: r.layer, message: r.message })),
  };
}

/** Why a call needs a human because the policy lists the tool under `approval.tools`, or null. */
export function policyToolReason(policy: Policy, tool: string): ApprovalReason | null {
  return (policy.approval.tools as readonly string[]).includes(tool)
    ? { kind: 'policy_tool', policy: policy.name, tool }
    : null;
}

/**
 * The approval gate every gated tool calls once its own checks passed (DESIGN §6). It resolves to
 * `{ approved: true }` only when it has just used up an approval of exactly this call — connection, tool,
 * machine, bound arguments and policy version — and then the caller must run the call and pass `approved: true`
 * to the agent. Otherwise it throws: `PendingApprovalAnswer` (a request was made or is still open: the AI gets
 * the pending_approval answer), `approval_denied` (a person denied this exact call), `too_many_pending_approvals`,
 * or `blocked_by_policy` when nobody could approve it.
 */
export async function requireApproval(
  ctx: ToolCallContext,
  call: GatedCall,
): Promise<{ approved: true; approvalId: string }> {
  const { deps, principal } = ctx;
  const now = deps.now();
  const args = boundArguments(call.args);
  const binding = {
    credentialId: principal.credentialId,
    tool: call.tool,
    machineId: call.machine.id,
    argsHash: args.sha256,
    policyHash: policyVersion(call.policy),
  };
  const members = await approverCandidates(deps.identity, principal.accountId);
  const asked = eligibleApprovers(call.policy.approval.approvers, principal.userId, members);
  if (asked.length === 0) {
    throw new LetKiteError(
      'blocked_by_policy',
      `this call needs a human approval (${call.policy.approval.approvers}) but nobody in the account can give it`,
      { layer: 'policy', approvers: call.policy.approval.approvers },
    );
  }
  const candidate: ApprovalRequest = {
    ...binding,
    id: `apr_${randomBytes(16).toString('hex')}`,
    accountId: principal.accountId,
    requesterId: principal.userId,
    clientName: ctx.client?.name.slice(0, 200) ?? null,
    machineName: call.machine.name,
    args: args.json,
    policyName: call.policy.name,
    reason: call.reason,
    approvers: call.policy.approval.approvers,
    askedUserIds: asked.map((a) => a.userId),
    status: 'pending',
    createdAt: now.toISOString(),
    expiresAt: approvalExpiresAt(now, call.policy.approval.timeout).toISOString(),
    decidedAt: null,
    decidedBy: null,
    decidedWith: null,
    usedAt: null,
  };
  const outcome = await deps.approvals.store.gate(binding, candidate, MAX_PENDING_PER_CONNECTION, now.toISOString());
  ctx.audit.details = { ...ctx.audit.details, args_sha256: args.sha256 };
  switch (outcome.kind) {
    case 'consumed':
      ctx.audit.details.approval_id = outcome.request.id;
      deps.approvals.events.changed(outcome.request.id);
      return { approved: true, approvalId: outcome.request.id };
    case 'denied':
      ctx.audit.details.approval_id = outcome.request.id;
      throw new LetKiteError(
        'approval_denied',
        `a person denied exactly this call (approval ${outcome.request.id}); do not repeat it`,
        { approval_id: outcome.request.id, denied_at: outcome.request.decidedAt },
      );
    case 'too_many':
      throw new LetKiteError(
        'too_many_pending_approvals',
        `this connection already has ${outcome.pending} approval requests waiting (at most ${MAX_PENDING_PER_CONNECTION}); wait for them or let them expire`,
        { pending: outcome.pending, max: MAX_PENDING_PER_CONNECTION },
      );
    case 'pending': {
      const r = outcome.request;
      ctx.audit.details.approval_id = r.id;
      if (outcome.created) {
        deps.approvals.notifier
          .requested(r)
          .catch((err) => deps.log(`notifying approvers of ${r.id} failed: ${String(err)}`));
      }
      const names = members.filter((m) => r.askedUserIds.includes(m.userId)).map((m) => m.user.name);
      const url = new URL(approvalPath(r.id), deps.publicUrl).toString();
      throw new PendingApprovalAnswer({
        status: 'pending_approval',
        approval_id: r.id,
        approvers: names,
        expires_at: r.expiresAt,
        message:
          `This ${call.tool} on "${call.machine.name}" needs a human approval and has not run. ` +
          `Tell the person: ${names.join(', ')} must approve it at ${url} before ${r.expiresAt}. ` +
          `Then call approval_wait with approval_id "${r.id}" (repeat while it answers pending); once it answers ` +
          'approved, repeat this call with exactly the same arguments — it then runs once.' +
          (outcome.previous
            ? ` (The earlier request ${outcome.previous.id} for this call was ${outcome.previous.status}.)`
            : ''),
        ...(outcome.previous
          ? { previous: { approval_id: outcome.previous.id, status: outcome.previous.status as 'used' | 'expired' } }
          : {}),
      });
    }
  }
}

/**
 * The gate as command tools use it: a human is needed when the command's verdict is `approve` or the policy lists
 * the tool in `approval.tools`. Resolves whether an approval of exactly this call was used up (false when none was
 * needed); throws the pending answer, `approval_denied` … like `requireApproval`.
 */
export async function approveIfNeeded(
  ctx: ToolCallContext,
  call: Omit<GatedCall, 'reason'> & { judgement: CommandJudgement | null },
): Promise<boolean> {
  const { judgement, ...gated } = call;
  const reason = (judgement ? commandRuleReason(judgement) : null) ?? policyToolReason(gated.policy, gated.tool);
  if (!reason) return false;
  return (await requireApproval(ctx, { ...gated, reason })).approved;
}
