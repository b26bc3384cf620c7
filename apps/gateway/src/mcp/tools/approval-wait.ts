import { APPROVAL_WAIT_MAX_S, approvalWait, LetKiteError } from '@letkite/protocol';
import type { ApprovalRequest } from '../../approvals/approval-store';
import { defineHandler } from '../tool-handler';

/** How often a waiting call re-reads the store (a decision taken by another gateway process raises no event here). */
const RECHECK_MS = 2_000;
/** How often a waiting call tells a client that asked for progress that it is still waiting. */
const PROGRESS_MS = 5_000;

function answer(r: ApprovalRequest) {
  const status = r.status === 'used' ? 'approved' : r.status;
  const message = {
    pending: 'Nobody has decided yet. Call approval_wait again, or tell the person again.',
    approved: 'Approved. Repeat the original call with exactly the same arguments; it runs once.',
    used: 'Approved, and the approved call already ran. Repeating it asks for a new approval.',
    denied: 'Denied. Do not repeat this call: it is refused without asking anyone again.',
    expired: 'Expired before anyone decided. Repeating the call asks again.',
  }[r.status];
  return {
    approval_id: r.id,
    status,
    expires_at: r.expiresAt,
    decided_at: r.decidedAt,
    used_at: r.usedAt,
    message,
  };
}

/**
 * `approval_wait`: long-polls one approval request of this connection until it is decided (or expires), at most
 * `max_wait_s`. Woken by the in-process decision event, with a periodic store re-check as the safety net.
 */
export const approvalWaitHandler = defineHandler(approvalWait, async (input, ctx) => {
  const { store, events } = ctx.deps.approvals;
  ctx.audit.target = input.approval_id;
  const load = async (): Promise<ApprovalRequest> => {
    await store.expireDue(ctx.deps.now().toISOString());
    const r = await store.get(input.approval_id);
    // Another connection's request looks exactly like a missing one.
    if (!r || r.credentialId !== ctx.principal.credentialId) {
      throw new LetKiteError('not_found', `no approval request "${input.approval_id}" for this connection`);
    }
    return r;
  };
  let current = await load();
  const maxMs = (input.max_wait_s ?? APPROVAL_WAIT_MAX_S) * 1000;
  const started = Date.now();
  if (current.status !== 'pending' || maxMs === 0) return answer(current);

  let wake: () => void = () => {};
  const unsubscribe = events.onChange(current.id, () => wake());
  const onAbort = () => wake();
  ctx.signal.addEventListener('abort', onAbort);
  try {
    let lastProgress = 0;
    await ctx.progress(0, maxMs / 1000, 'waiting for a person to decide');
    while (current.status === 'pending' && !ctx.signal.aborted) {
      const left = maxMs - (Date.now() - started);
      if (left <= 0) break;
      const expiresIn = Date.parse(current.expiresAt) - ctx.deps.now().getTime();
      const nap = Math.max(
        0,
        Math.min(left, RECHECK_MS, PROGRESS_MS - (Date.now() - started - lastProgress), expiresIn + 50),
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, nap);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      current = await load();
      const elapsed = Date.now() - started;
      if (current.status === 'pending' && elapsed - lastProgress >= PROGRESS_MS) {
        lastProgress = elapsed;
        await ctx.progress(Math.floor(elapsed / 1000), maxMs / 1000, 'still waiting for a person to decide');
      }
    }
  } finally {
    unsubscribe();
    ctx.signal.removeEventListener('abort', onAbort);
  }
  return answer(current);
});
