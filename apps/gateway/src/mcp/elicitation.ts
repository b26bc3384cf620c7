import type { ElicitRequestURLParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { approvalPath } from '../approvals/notify-approvers';
import type { Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import type { CallToolResult } from './tool-handler';

/** The longest a call waits in one elicitation for a decision (the approval may expire sooner). */
export const ELICITATION_WAIT_MAX_MS = 10 * 60_000;
/** How often the waiting call re-reads the approval (a decision on another gateway raises no event here). */
const RECHECK_MS = 2_000;
/** How often a client that asked for progress hears that the call still waits (keeps its request timeout alive). */
const PROGRESS_MS = 10_000;

export interface PendingStructured {
  status: 'pending_approval';
  approval_id: string;
  expires_at: string;
  message: string;
}

/** Whether a tool result is the gate's pending answer (the call has not run and waits for a human). */
export function isPendingAnswer(r: CallToolResult): r is CallToolResult & { structuredContent: PendingStructured } {
  return !r.isError && r.structuredContent?.status === 'pending_approval';
}

export type Decision = 'approved' | 'denied' | 'expired' | 'declined' | 'timeout' | 'cancelled';

/**
 * Approval through the client (MCP URL-mode elicitation, spec 2025-11-25): the client is sent the approval page's
 * URL — the person opens it and still approves there with a passkey or an authenticator code; the client never
 * sees or carries a proof — while the call waits for the decision in the approval store. The client's answer only
 * says whether the person agreed to open the page: `decline` or `cancel` stops the wait (the AI gets the pending
 * answer as without elicitation). Decided → `notifications/elicitation/complete`, and the caller repeats the call,
 * which uses the approval up (or gets `approval_denied`).
 */
export async function approveThroughClient(opts: {
  deps: GatewayDeps;
  principal: Principal;
  pending: PendingStructured;
  signal: AbortSignal;
  progress: (progress: number, total?: number, message?: string) => Promise<void>;
  /** Sends the elicitation; `signal` ends the request once the call stopped waiting for it. */
  elicit: (params: ElicitRequestURLParams, signal: AbortSignal) => Promise<ElicitResult>;
  notify: (n: { method: 'notifications/elicitation/complete'; params: { elicitationId: string } }) => Promise<void>;
}): Promise<Decision> {
  const { deps, principal, pending } = opts;
  const { store, events } = deps.approvals;
  const id = pending.approval_id;
  const url = new URL(approvalPath(id), deps.publicUrl).toString();
  const started = Date.now();
  const deadline = Math.min(started + ELICITATION_WAIT_MAX_MS, Date.parse(pending.expires_at) + 1000);
  let answered: Decision | null = null;
  // Ends our elicitation request when the wait is over (its timer and pending entry would otherwise outlive it).
  const done = new AbortController();
  let wake: () => void = () => {};
  // The elicitation's own answer is not awaited before watching the approval: a client may keep it open until the
  // page is closed, and an answer that reaches another gateway of a cluster never arrives here.
  opts
    .elicit(
      {
        mode: 'url',
        elicitationId: id,
        url,
        message: `Approve this call at ${url} (a passkey or an authenticator code is asked for there).`,
      },
      done.signal,
    )
    .then((r) => {
      if (r.action !== 'accept') {
        answered = r.action === 'decline' ? 'declined' : 'cancelled';
        wake();
      }
    })
    .catch(() => undefined);
  const unsubscribe = events.onChange(id, () => wake());
  const onAbort = () => wake();
  opts.signal.addEventListener('abort', onAbort);
  let lastProgress = started;
  try {
    for (;;) {
      await store.expireDue(deps.now().toISOString());
      const r = await store.get(id);
      if (!r || r.credentialId !== principal.credentialId) return 'expired';
      if (r.status === 'approved' || r.status === 'used') break;
      if (r.status === 'denied') break;
      if (r.status === 'expired') return 'expired';
      if (answered) return answered;
      if (opts.signal.aborted) return 'cancelled';
      if (Date.now() >= deadline) return 'timeout';
      if (Date.now() - lastProgress >= PROGRESS_MS) {
        lastProgress = Date.now();
        await opts.progress(Math.floor((Date.now() - started) / 1000), undefined, 'waiting for a person to approve');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(RECHECK_MS, Math.max(0, deadline - Date.now())));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const decided = await store.get(id);
    await opts
      .notify({ method: 'notifications/elicitation/complete', params: { elicitationId: id } })
      .catch(() => undefined);
    return decided?.status === 'denied' ? 'denied' : 'approved';
  } finally {
    done.abort();
    unsubscribe();
    opts.signal.removeEventListener('abort', onAbort);
  }
}
