import { z } from 'zod';
import { defineTool } from '../define-tool';

/** The longest one approval_wait call blocks; AI clients commonly time a call out after 60 s. */
export const APPROVAL_WAIT_MAX_S = 45;

/** Where an approval request stands, as approval_wait reports it (DESIGN §7); a used one is `approved` with `used_at`. */
export const approvalWaitStatuses = ['pending', 'approved', 'denied', 'expired'] as const;
export const ApprovalWaitStatus = z.enum(approvalWaitStatuses);
export type ApprovalWaitStatus = z.infer<typeof ApprovalWaitStatus>;

export const approvalWaitInput = z.strictObject({
  approval_id: z.string().min(1).max(128).describe('The approval_id a gated call answered with.'),
  max_wait_s: z
    .number()
    .int()
    .min(0)
    .max(APPROVAL_WAIT_MAX_S)
    .optional()
    .describe(`Seconds to wait for a decision (default and at most ${APPROVAL_WAIT_MAX_S}); 0 only looks.`),
});

export const approvalWaitOutput = z.object({
  approval_id: z.string(),
  status: ApprovalWaitStatus,
  expires_at: z.string(),
  decided_at: z.string().nullable(),
  /** Set once the approved call ran: the approval is spent, a repeat asks again. */
  used_at: z.string().nullable(),
  message: z.string(),
});

export const approvalWait = defineTool({
  name: 'approval_wait',
  title: 'Wait for a human approval',
  description:
    'Waits (up to max_wait_s, at most 45 s) for a person to decide an approval request and reports pending, approved, denied or expired. After approved, repeat the original call with exactly the same arguments: the approval runs that call once. Call again while it is pending.',
  input: approvalWaitInput,
  output: approvalWaitOutput,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // not_found: no such request for this connection (another connection's requests look the same).
  errors: ['not_found'],
});
