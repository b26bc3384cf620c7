import { z } from 'zod';
import type { ErrorCode } from '../errors';

/** A machine named by its id or by a unique name. */
export const MachineRef = z.string().min(1).max(128).describe('Machine id or unique name (see machines_list).');

/** The answer to a call that waits for a human (DESIGN §6). */
export const PendingApproval = z.object({
  status: z.literal('pending_approval'),
  approval_id: z.string().describe('Pass to approval_wait; the request is bound to exactly this call.'),
  approvers: z.array(z.string()).describe('Who was asked (names or e-mail addresses).'),
  expires_at: z.string().describe('ISO-8601 time after which nobody can approve it any more.'),
  message: z.string().describe('What to do now: tell the person, call approval_wait, then repeat the same call.'),
  /** The last earlier request for the identical call, when it can no longer be used (so a new one was made). */
  previous: z
    .object({ approval_id: z.string(), status: z.enum(['used', 'expired']) })
    .optional()
    .describe('An earlier request for the identical call that was already used or expired.'),
});
export type PendingApproval = z.infer<typeof PendingApproval>;

/** Codes any call that reaches a machine can answer with. */
export const reachingMachineErrors = [
  'machine_not_found',
  'ambiguous_machine',
  'machine_offline',
  'blocked_by_ceiling',
  'timeout',
] as const satisfies readonly ErrorCode[];

/** Codes of a call that command rules judge and that can need a human (DESIGN §6). */
export const gatedCallErrors = [
  'blocked_by_policy',
  'confirmation_required',
  'approval_denied',
  'approval_expired',
  'too_many_pending_approvals',
] as const satisfies readonly ErrorCode[];
