import { z } from 'zod';

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
