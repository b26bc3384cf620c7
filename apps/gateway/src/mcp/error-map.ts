import type { ErrorCode, LetKiteError } from '@letkite/protocol';
import { z } from 'zod';

/** What an AI client is told about an error besides its code: whether trying again can help, and what to do. */
export interface McpErrorInfo {
  /** The same call, repeated later unchanged, may succeed. */
  retryable: boolean;
  /** One sentence for the AI on what to do next (absent where the message says it all). */
  hint?: string;
}

/**
 * The MCP surface's one error table (REVIEW §4.2, DESIGN §8): a new code does not compile until it is mapped here.
 * Several codes never reach an MCP client today (`approval_pending` is a success answer, `invalid_token` is the
 * agent's join); they are mapped anyway so the table stays exhaustive.
 */
export const mcpErrorOf: Record<ErrorCode, McpErrorInfo> = {
  invalid_params: { retryable: false, hint: 'Fix the arguments named in the message and call again.' },
  unauthenticated: { retryable: false, hint: 'The credential is unknown, expired or revoked: reconnect.' },
  forbidden: { retryable: false, hint: 'This connection may not do this; ask the person to widen its grant.' },
  machine_not_found: { retryable: false, hint: 'Call machines_list for the machines you can reach.' },
  ambiguous_machine: { retryable: false, hint: 'Several machines match: use one of the ids in details.ids.' },
  machine_offline: { retryable: true, hint: "The machine's agent is not connected; try again later." },
  blocked_by_policy: { retryable: false, hint: "The connection's policy refuses this; do not work around it." },
  blocked_by_ceiling: { retryable: false, hint: "The machine's own ceiling refuses this; do not work around it." },
  confirmation_required: {
    retryable: false,
    hint: 'Show the person the exact call, and repeat it with confirm: true only if they agree.',
  },
  approval_pending: { retryable: true, hint: 'Call approval_wait with the approval id, then repeat the same call.' },
  approval_denied: { retryable: false, hint: 'A person denied this exact call; do not repeat it.' },
  approval_expired: { retryable: false, hint: 'Nobody decided in time; repeat the call to ask again.' },
  too_many_pending_approvals: {
    retryable: true,
    hint: 'Wait for the open approval requests (approval_wait) before asking for more.',
  },
  not_found: { retryable: false },
  too_large: { retryable: false, hint: 'Ask for less (a smaller window, offset or length).' },
  timeout: { retryable: true, hint: 'Give it more time (timeout_s), or start it as a job.' },
  rate_limited: { retryable: true, hint: 'Too many calls; wait a little before the next.' },
  unsupported: { retryable: false },
  not_implemented: { retryable: false },
  conflict: { retryable: false, hint: 'It changed since you read it: read it again before writing.' },
  invalid_token: { retryable: false },
  protocol_error: { retryable: true },
  internal: { retryable: true, hint: 'Something failed on the gateway; it is logged. Try again later.' },
  invalid_config: { retryable: false },
};

/**
 * The structured answer of a refused call (DESIGN §7): the error's payload plus the table's advice. It is also
 * what the published output schemas admit beside the tool's output, because strict MCP clients validate
 * `structuredContent` against the output schema even on `isError` results.
 */
export const ToolErrorResult = z.object({
  code: z.string().describe('A stable error code (DESIGN §8).'),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
  retryable: z.boolean().describe('Whether the same call may succeed later.'),
  hint: z.string().optional(),
});
export type ToolErrorResult = z.infer<typeof ToolErrorResult>;

/** The structured answer for an error whose payload is already masked. */
export function toolErrorResult(payload: ReturnType<LetKiteError['toPayload']>): ToolErrorResult {
  const info = mcpErrorOf[payload.code];
  return { ...payload, retryable: info.retryable, ...(info.hint ? { hint: info.hint } : {}) };
}
