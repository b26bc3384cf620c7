import { createHash, randomBytes } from 'node:crypto';
import { ApprovalBinding, approvalChallenge as protocolApprovalChallenge } from '@letkite/protocol';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { SignedInUser } from '../identity/current-user';
import { type PasskeyDeps, passkeyAuthenticationOptions } from '../identity/verify-passkey';
import type { ApprovalRequest, ApprovalStore } from './approval-store';
import { loadApprovalFor, type ViewDeps } from './approval-view';
import { assertDecidable } from './decide-approval';

/** A passkey challenge is good for this long after the page asked for it. */
export const APPROVAL_CHALLENGE_TTL_MS = 5 * 60_000;

/**
 * The WebAuthn challenge for approving a request without a binding: SHA-256(approval id ‖ 0x00 ‖ 32 random
 * bytes), base64url.
 * It is stored bound to the approval and the person, and used once, so an assertion made for one approval (or by
 * sign-in) cannot approve another.
 */
export function approvalChallenge(approvalId: string): string {
  return createHash('sha256')
    .update(approvalId)
    .update(Buffer.from([0]))
    .update(randomBytes(32))
    .digest('base64url');
}

/**
 * The challenge of an approval the machines verify (it has a binding): base64url(SHA-256(binding)), the same for
 * every approver and every attempt, so the assertion is a signature over exactly what will run. Null otherwise.
 */
export function boundChallenge(request: Pick<ApprovalRequest, 'proofBinding'>): string | null {
  if (request.proofBinding === null) return null;
  return protocolApprovalChallenge(ApprovalBinding.parse(JSON.parse(request.proofBinding)));
}

/**
 * How a challenge is stored: a random one as itself; a bound one (the same for everyone) per approver, so each
 * person's attempt is theirs and used once.
 */
export function challengeKey(challenge: string, request: Pick<ApprovalRequest, 'proofBinding'>, userId: string) {
  return request.proofBinding === null ? challenge : `${challenge}.${userId}`;
}

/** Starts a passkey approval: checks the person may decide, stores a fresh bound challenge, returns the options. */
export async function startPasskeyApproval(
  deps: ViewDeps & PasskeyDeps & { approvals: { store: ApprovalStore } },
  user: SignedInUser,
  id: string,
): Promise<{ challenge: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const { request, whyNot } = await loadApprovalFor(deps, user, id);
  assertDecidable(request, whyNot, deps.now());
  const bound = boundChallenge(request);
  const challenge = bound ?? approvalChallenge(request.id);
  const now = deps.now();
  await deps.approvals.store.putChallenge({
    challenge: challengeKey(challenge, request, user.userId),
    approvalId: request.id,
    userId: user.userId,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + APPROVAL_CHALLENGE_TTL_MS).toISOString(),
  });
  const options = await passkeyAuthenticationOptions({ userId: user.userId, challenge, deps });
  // A bound challenge is used as the raw hash bytes, so the browser echoes exactly it in clientDataJSON.
  if (bound) options.challenge = bound;
  return { challenge, options };
}
