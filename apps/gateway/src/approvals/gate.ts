import { randomBytes } from 'node:crypto';
import { type CommandJudgement, verifiesApprovals } from '@letkite/ceiling';
import type { Policy } from '@letkite/policy';
import {
  ApprovalAssertion,
  ApprovalBinding,
  type ApprovalProof,
  approvalBinding,
  canonicalJson,
  LetKiteError,
} from '@letkite/protocol';
import type { ToolCallContext } from '../mcp/tool-handler';
import { reportedCeiling, revisionOf } from '../policy/resolve-policy';
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
  /**
   * What the agents will be sent once this is approved: the op and its exact params (the same object the caller
   * then passes to the hub), on each of `machines`. The approver's passkey signs it (machine-verified approvals,
   * @letkite/protocol approval-proof.ts); without it an approval can only be vouched for by the gateway.
   */
  agent?: AgentRun;
}

/** One agent request an approval covers, on one or several machines (exec_many sends the same to each). */
export interface AgentRun {
  op: string;
  params: unknown;
  machines: readonly Machine[];
}

const proofs = new WeakMap<ToolCallContext, ApprovalProof>();

/**
 * The approval proof for the agent request context of a call whose approval `requireApproval` just used up:
 * spread it into the context (`{ policy, …, ...approvalProofContext(ctx) }`). Empty when there is none (no
 * approval, a TOTP approval, or a call without an agent binding).
 */
export function approvalProofContext(ctx: ToolCallContext): { approval_proof?: ApprovalProof } {
  const proof = proofs.get(ctx);
  return proof ? { approval_proof: proof } : {};
}

/** Whether a machine's reported ceiling pins approvers (false when it cannot be read: the agent has the last word). */
export function pinsApprovers(machine: Machine): boolean {
  try {
    return verifiesApprovals(reportedCeiling(machine));
  } catch {
    return false;
  }
}

/** The stored proof of a used-up approval, or undefined when it has none or it does not parse. */
function storedProof(r: ApprovalRequest): ApprovalProof | undefined {
  if (r.proofBinding === null || r.assertion === null) return undefined;
  const binding = ApprovalBinding.safeParse(JSON.parse(r.proofBinding));
  const assertion = ApprovalAssertion.safeParse(JSON.parse(r.assertion));
  return binding.success && assertion.success ? { binding: binding.data, assertion: assertion.data } : undefined;
}

/**
 * The policy version an approval binds to. A stored account policy binds its name and revision as well as its
 * content: any saved edit asks again, even one that changes nothing the policy decides (a person reviewing the
 * new revision is the point). A built-in or inline policy is bound by its content alone, as before.
 */
export function boundPolicyVersion(policy: Policy): string {
  const revision = revisionOf(policy);
  return revision === undefined ? policyVersion(policy) : policyVersion({ policy, revision });
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
    policyHash: boundPolicyVersion(call.policy),
  };
  // A ceiling `approve` rule is satisfied only by an approval the machine verifies itself (DESIGN §9).
  const byCeilingRule = call.reason.kind === 'command_rule' && call.reason.rules.some((r) => r.layer === 'ceiling');
  const machines = call.agent?.machines ?? [];
  if (byCeilingRule && machines.length > 0 && !machines.some(pinsApprovers)) {
    const names = machines.map((m) => `"${m.name}"`).join(', ');
    throw new LetKiteError(
      'blocked_by_ceiling',
      `the ceiling of ${names} requires an approval the machine verifies itself, and it pins no approvers ` +
        '(approvers = [] in its ceiling.toml), so this call cannot be approved there',
      { layer: 'ceiling', key: 'approvers', reason: 'no_pinned_approvers' },
    );
  }
  const passkeyOnly = byCeilingRule || machines.some(pinsApprovers);
  const members = await approverCandidates(deps.identity, principal.accountId);
  const asked = eligibleApprovers(call.policy.approval.approvers, principal.userId, members);
  if (asked.length === 0) {
    throw new LetKiteError(
      'blocked_by_policy',
      `this call needs a human approval (${call.policy.approval.approvers}) but nobody in the account can give it`,
      { layer: 'policy', approvers: call.policy.approval.approvers },
    );
  }
  const id = `apr_${randomBytes(16).toString('hex')}`;
  const expiresAt = approvalExpiresAt(now, call.policy.approval.timeout).toISOString();
  const candidate: ApprovalRequest = {
    ...binding,
    id,
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
    expiresAt,
    decidedAt: null,
    decidedBy: null,
    decidedWith: null,
    usedAt: null,
    proofBinding: call.agent
      ? canonicalJson(
          approvalBinding({
            approvalId: id,
            tool: call.tool,
            policy: call.policy,
            expiresAt,
            targets: machines.map((m) => ({ machineId: m.id, op: call.agent?.op ?? '', params: call.agent?.params })),
          }),
        )
      : null,
    passkeyOnly,
    assertion: null,
  };
  const outcome = await deps.approvals.store.gate(binding, candidate, MAX_PENDING_PER_CONNECTION, now.toISOString());
  ctx.audit.details = { ...ctx.audit.details, args_sha256: args.sha256 };
  switch (outcome.kind) {
    case 'consumed': {
      ctx.audit.details.approval_id = outcome.request.id;
      const proof = storedProof(outcome.request);
      if (proof) proofs.set(ctx, proof);
      deps.approvals.events.changed(outcome.request.id);
      return { approved: true, approvalId: outcome.request.id };
    }
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
