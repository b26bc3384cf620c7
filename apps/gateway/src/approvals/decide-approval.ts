import { ApprovalAssertion, LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import type { SignedInUser } from '../identity/current-user';
import { type PasskeyDeps, verifyPasskeyAssertion } from '../identity/verify-passkey';
import { type TotpDeps, verifyTotpOnce } from '../identity/verify-totp';
import type { UserActor } from '../services/actor';
import type { ServiceContext } from '../services/service-context';
import type { ApprovalRequest } from './approval-store';
import { isPasskeyOnly, loadApprovalFor, type ViewDeps } from './approval-view';
import type { Approvals } from './approvals';
import { boundChallenge, challengeKey } from './passkey-challenge';

/** How an approver proves, at the moment of approving, that it is them: a fresh passkey assertion or a TOTP code. */
export const ApproveInput = z.discriminatedUnion('method', [
  z.object({
    method: z.literal('passkey'),
    /** The challenge `passkey-options` returned for this approval. */
    challenge: z.string().min(1).max(200),
    /** The browser's `startAuthentication()` result. */
    response: z.record(z.string(), z.unknown()),
  }),
  z.object({ method: z.literal('totp'), code: z.string().min(6).max(16) }),
]);
export type ApproveInput = z.infer<typeof ApproveInput>;

/** Which approval request a decision is about. */
export const ApprovalRef = z.object({ id: z.string().min(1).max(100) });
/** The input of approving one request: its id and the approver's fresh proof. */
export const ApproveRequestInput = z.intersection(ApprovalRef, ApproveInput);
export type ApproveRequestInput = z.infer<typeof ApproveRequestInput>;

export type DecideDeps = ViewDeps & PasskeyDeps & TotpDeps & { approvals: Approvals; log: (msg: string) => void };

/** What a decision gets: the service context with the signed-in approver as its actor. */
export type DecideContext = ServiceContext<DecideDeps, UserActor>;

/** Refuses a decision on a request that is settled, expired, or that this person may not decide. */
export function assertDecidable(r: ApprovalRequest, whyNot: string | null, now: Date): void {
  if (r.status === 'expired' || (r.status === 'pending' && Date.parse(r.expiresAt) <= now.getTime())) {
    throw new LetKiteError('approval_expired', `approval "${r.id}" expired at ${r.expiresAt}`, { approval_id: r.id });
  }
  if (r.status !== 'pending') {
    throw new LetKiteError('conflict', `approval "${r.id}" is already ${r.status}`, {
      approval_id: r.id,
      status: r.status,
    });
  }
  if (whyNot !== null) throw new LetKiteError('forbidden', whyNot, { approval_id: r.id, reason: 'not_an_approver' });
}

/**
 * Whether the proof holds; for a passkey over a bound challenge also the assertion to keep (the machines verify
 * it themselves), else null.
 */
async function proofHolds(
  deps: DecideDeps,
  user: SignedInUser,
  r: ApprovalRequest,
  input: ApproveInput,
): Promise<{ ok: boolean; assertion: string | null }> {
  if (input.method === 'totp') {
    return { ok: await verifyTotpOnce({ userId: user.userId, code: input.code, deps }), assertion: null };
  }
  // The challenge must be the one issued for this approval and this person, and it is used up either way.
  const key = challengeKey(input.challenge, r, user.userId);
  const taken = await deps.approvals.store.takeChallenge(key, r.id, user.userId, deps.now().toISOString());
  if (!taken) return { ok: false, assertion: null };
  const bound = boundChallenge(r);
  if (bound !== null && input.challenge !== bound) return { ok: false, assertion: null };
  const ok = await verifyPasskeyAssertion({
    userId: user.userId,
    expectedChallenge: input.challenge,
    ...(bound !== null ? { echoedChallenge: bound } : {}),
    response: input.response,
    deps,
  });
  if (!ok || bound === null) return { ok, assertion: null };
  const response = input.response as { id?: unknown; response?: Record<string, unknown> };
  const assertion = ApprovalAssertion.safeParse({
    credential_id: response.id,
    authenticator_data: response.response?.authenticatorData,
    client_data_json: response.response?.clientDataJSON,
    signature: response.response?.signature,
  });
  return assertion.success ? { ok, assertion: JSON.stringify(assertion.data) } : { ok: false, assertion: null };
}

/**
 * TOTP cannot be checked by a machine: where a target machine verifies approvals itself (or a ceiling rule asks
 * for an approval), only a passkey can approve.
 */
async function assertMethodAllowed(deps: DecideDeps, r: ApprovalRequest, method: ApproveInput['method']) {
  if (method === 'totp' && (await isPasskeyOnly(deps, r))) {
    throw new LetKiteError(
      'forbidden',
      `"${r.machineName}" verifies approvals itself and accepts passkey approvals only: a TOTP code cannot be checked by the machine`,
      { approval_id: r.id, reason: 'passkey_only' },
    );
  }
}

async function settle(
  deps: DecideDeps,
  user: SignedInUser,
  r: ApprovalRequest,
  status: 'approved' | 'denied',
  method: 'passkey' | 'totp' | 'session',
  assertion: string | null = null,
): Promise<ApprovalRequest> {
  const at = deps.now().toISOString();
  const decided = await deps.approvals.store.decide(
    r.id,
    { status, by: user.userId, with: method, at, assertion },
    {
      accountId: r.accountId,
      at,
      actor: `user:${user.userId}`,
      action: status === 'approved' ? 'approval.approve' : 'approval.deny',
      target: r.id,
      decision: status,
      outcome: 'ok',
      details: { method },
    },
  );
  if (!decided) {
    const now = await deps.approvals.store.get(r.id);
    assertDecidable(now ?? r, null, deps.now());
    throw new LetKiteError('conflict', `approval "${r.id}" was decided meanwhile`, { approval_id: r.id });
  }
  deps.approvals.events.changed(r.id);
  deps.approvals.notifier
    .settled(decided)
    .catch((err) => deps.log(`telling the requester of ${r.id} failed: ${String(err)}`));
  return decided;
}

/**
 * Approves a request. The person must be signed in, allowed to decide it (connector / any_admin / four_eyes, and
 * never their own four-eyes request), and prove themselves again now: the link alone decides nothing.
 */
export async function approveRequest(ctx: DecideContext, input: ApproveRequestInput): Promise<ApprovalRequest> {
  const { deps } = ctx;
  const user = ctx.actor.user;
  const { id, ...given } = input;
  // The intersection's type loses the union's narrowing on `method`; the schema checked it.
  const proofInput = given as ApproveInput;
  const { request, whyNot } = await loadApprovalFor(deps, user, id);
  assertDecidable(request, whyNot, deps.now());
  await assertMethodAllowed(deps, request, proofInput.method);
  // Counted before the check, in the limiter every gateway shares: concurrent guesses each take one of the tries.
  const attempt = await deps.approvals.proofLimiter.hit(user.userId, deps.now().getTime());
  if (!attempt.allowed) {
    throw new LetKiteError('rate_limited', 'too many failed attempts; wait a few minutes', {
      retry_after_s: Math.ceil(attempt.retryAfterMs / 1000),
    });
  }
  const proof = await proofHolds(deps, user, request, proofInput);
  if (proof.ok) await deps.approvals.proofLimiter.reset(user.userId);
  else {
    throw new LetKiteError(
      'forbidden',
      proofInput.method === 'totp' ? 'that code is wrong or was used already' : 'the passkey check failed',
      { approval_id: id, reason: 'proof' },
    );
  }
  return settle(deps, user, request, 'approved', proofInput.method, proof.assertion);
}

/** Denies a request: being signed in (with CSRF) and allowed to decide is enough; a denial runs nothing. */
export async function denyRequest(ctx: DecideContext, input: z.infer<typeof ApprovalRef>): Promise<ApprovalRequest> {
  const { deps } = ctx;
  const user = ctx.actor.user;
  const { request, whyNot } = await loadApprovalFor(deps, user, input.id);
  assertDecidable(request, whyNot, deps.now());
  return settle(deps, user, request, 'denied', 'session');
}
