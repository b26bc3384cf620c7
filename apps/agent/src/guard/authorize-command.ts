import { type ClampedPolicy, commandRefusal, judgeCommand } from '@letkite/ceiling';
import type { ApprovalTool } from '@letkite/policy';
import { LetKiteError, type RequestContext } from '@letkite/protocol';
import type { RequestPolicy } from './request-policy';

/**
 * The agent's own check of a command (DESIGN §3: every call is checked twice): the shell level, the command mode
 * and the command rules — the request's policy rules plus the ceiling's — whatever the gateway decided. What the
 * ceiling forbids is `blocked_by_ceiling`. An `approve` verdict runs only when the gateway vouches for a human
 * approval of exactly this call. Returns the command's words when it is one plain command (allowlist mode runs
 * those with execve).
 */
export function authorizeCommand(
  rp: RequestPolicy,
  command: string | string[],
  context: RequestContext,
): { words: string[] | null } {
  const judgement = judgeCommand(rp.clamped, rp.ceiling, command, { confirm: context.confirm ?? false });
  const refusal = commandRefusal(judgement, context.approved === true);
  if (refusal) throw refusal;
  const distinct = new Set(judgement.reasons.map((r) => JSON.stringify(r.command)));
  const first = judgement.reasons[0];
  return { words: distinct.size === 1 && first ? [...first.command] : null };
}

/**
 * The agent's own check of the policy's `approval.tools` (DESIGN §6): a tool listed there runs only when the
 * gateway vouches for a human approval of exactly this call, whatever the command rules say.
 */
export function authorizeGatedTool(rp: RequestPolicy, tool: ApprovalTool, context: RequestContext): void {
  if (rp.clamped.approval.tools.includes(tool) && context.approved !== true) {
    throw new LetKiteError('blocked_by_policy', `${tool} needs a human approval first`, {
      layer: 'policy',
      key: 'approval.tools',
    });
  }
}

/** Allowlist mode runs programs with execve and no shell. */
export function isAllowlist(clamped: ClampedPolicy): boolean {
  return clamped.commands.mode === 'allowlist';
}
