import { z } from 'zod';

/** A machine named by its id or by a unique name. */
export const MachineRef = z.string().min(1).max(128).describe('Machine id or unique name (see machines_list).');

/** The answer to a call that waits for a human (DESIGN §6). */
export const PendingApproval = z.object({
  status: z.literal('pending_approval'),
  approval_id: z.string(),
  approvers: z.array(z.string()),
  expires_at: z.string(),
  message: z.string(),
});
