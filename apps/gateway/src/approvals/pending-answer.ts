import type { PendingApproval } from '@letkite/protocol';

/**
 * Thrown by the approval gate when a call has to wait for a human. It is not an error: `runTool` turns it into a
 * successful result whose `structuredContent` is the `PendingApproval` shape (gated tools publish an output schema
 * that admits it), so the AI reads the instruction instead of a failure.
 */
export class PendingApprovalAnswer extends Error {
  override readonly name = 'PendingApprovalAnswer';

  constructor(readonly answer: PendingApproval) {
    super(answer.message);
  }
}
