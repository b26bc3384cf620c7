import { type ClampedPolicy, commandRefusal, judgeCommand, verifiesApprovals } from '@letkite/ceiling';
import type { ApprovalTool } from '@letkite/policy';
import { LetKiteError, type RequestContext } from '@letkite/protocol';
import type { RequestPolicy } from './request-policy';
import { verifiedApprovalOf } from './verify-approval';

/**
 * The agent's own check of a command (DESIGN §3: every call is checked twice): the shell level, the command mode
 * and the command rules — the request's policy rules plus the ceiling's — whatever the gateway decided. What the
 * ceiling forbids is `blocked_by_ceiling`. An `approve` verdict runs only with a human approval of exactly this
 * call that counts here (`humanApproval`: verified by the machine wherever the ceiling demands it). `env` is
 * the call's environment, judged like assignments before the command; `stdin` the text written to its standard
 * input (judged as a script where a shell reads it). Returns the command's words when it is
 * one plain command (allowlist mode runs those with execve).
 */
export function authorizeCommand(
  rp: RequestPolicy,
  command: string | string[],
  context: RequestContext,
  env?: Record<string, string> | undefined,
  stdin?: string | undefined,
): { words: string[] | null } {
  const judgement = judgeCommand(rp.clamped, rp.ceiling, command, { confirm: context.confirm ?? false, env, stdin });
  const approved = judgement.verdict === 'approve' && humanApproval(rp, context, judgement.layer === 'ceiling');
  const refusal = commandRefusal(judgement, approved);
  if (refusal) throw refusal;
  // Reasons about the standard input's script are not words of this command.
  const own = judgement.reasons.filter((r) => r.source !== 'stdin');
  const distinct = new Set(own.map((r) => JSON.stringify(r.command)));
  const first = own[0];
  return { words: distinct.size === 1 && first ? [...first.command] : null };
}

/**
 * The agent's own check of the policy's `approval.tools` (DESIGN §6): a tool listed there runs only with a human
 * approval of exactly this call, whatever the command rules say; on a machine that pins approvers, only with one
 * the machine verified.
 */
export function authorizeGatedTool(rp: RequestPolicy, tool: ApprovalTool, context: RequestContext): void {
  if (!rp.clamped.approval.tools.includes(tool)) return;
  if (!humanApproval(rp, context, false)) {
    throw new LetKiteError('blocked_by_policy', `${tool} needs a human approval first`, {
      layer: 'policy',
      key: 'approval.tools',
    });
  }
}

/**
 * Which human approval counts (DESIGN §6, §9; docs in packages/ceiling/README.md): an approval the agent verified
 * itself (`verify-approval.ts`) always; the gateway's `approved: true` only when the ceiling pins no approvers and
 * the approval is the policy's, never for a ceiling `approve` rule (`byCeiling`). False when the gateway's word
 * would count but is missing; throws `blocked_by_ceiling` when only a machine-verified approval counts.
 */
function humanApproval(rp: RequestPolicy, context: RequestContext, byCeiling: boolean): boolean {
  if (verifiedApprovalOf(context)) return true;
  const pinned = verifiesApprovals(rp.ceiling);
  if (!pinned && !byCeiling) return context.approved === true;
  if (!pinned) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      "this machine's ceiling requires an approval that the machine verifies itself, and it pins no approvers " +
        '(approvers = [] in its ceiling.toml), so this call cannot be approved here',
      { layer: 'ceiling', key: 'approvers', reason: 'no_pinned_approvers' },
    );
  }
  throw new LetKiteError(
    'blocked_by_ceiling',
    'this machine verifies approvals itself: the call needs a passkey approval by one of its pinned approvers ' +
      `(${rp.ceiling.approvers.map((a) => a.name).join(', ')}), and the request carries none`,
    { layer: 'ceiling', key: 'approvers', reason: 'approval_not_verified' },
  );
}

/** Allowlist mode runs programs with execve and no shell. */
export function isAllowlist(clamped: ClampedPolicy): boolean {
  return clamped.commands.mode === 'allowlist';
}
