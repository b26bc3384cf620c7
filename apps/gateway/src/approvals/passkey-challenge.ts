import { createHash, randomBytes } from 'node:crypto';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { SignedInUser } from '../identity/current-user';
import { type PasskeyDeps, passkeyAuthenticationOptions } from '../identity/verify-passkey';
import type { ApprovalStore } from './approval-store';
import { loadApprovalFor, type ViewDeps } from './approval-view';
import { assertDecidable } from './decide-approval';

/** A passkey challenge is good for this long after the page asked for it. */
export const APPROVAL_CHALLENGE_TTL_MS = 5 * 60_000;

/**
 * The WebAuthn challenge for approving one request: SHA-256(approval id ‖ 0x00 ‖ 32 random bytes), base64url.
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

/** Starts a passkey approval: checks the person may decide, stores a fresh bound challenge, returns the options. */
export async function startPasskeyApproval(
  deps: ViewDeps & PasskeyDeps & { approvals: { store: ApprovalStore } },
  user: SignedInUser,
  id: string,
): Promise<{ challenge: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const { request, whyNot } = await loadApprovalFor(deps, user, id);
  assertDecidable(request, whyNot, deps.now());
  const challenge = approvalChallenge(request.id);
  const now = deps.now();
  await deps.approvals.store.putChallenge({
    challenge,
    approvalId: request.id,
    userId: user.userId,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + APPROVAL_CHALLENGE_TTL_MS).toISOString(),
  });
  const options = await passkeyAuthenticationOptions({ userId: user.userId, challenge, deps });
  return { challenge, options };
}
