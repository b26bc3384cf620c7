import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { newId } from '../../auth/secrets';
import { actorLabel } from '../../services/actor';
import type { WebSession } from '../identity-store';
import { type PublicOpContext, parseInput } from '../op-context';
import { CHALLENGE_TTL_MS, newChallenge } from '../register-passkey';
import { newWebSession, signInAudit } from '../session-cookie';
import { passkeyAuthenticationOptions, verifyPasskeyAssertion } from '../verify-passkey';

export const PasskeySignInInput = z.object({
  challenge_id: z.string().min(1).max(100),
  response: z.looseObject({ id: z.string().min(1).max(1024) }),
});

/** Step 1: a fresh challenge for a discoverable-credential sign-in (no user name needed). */
export async function beginPasskeySignIn(ctx: PublicOpContext) {
  const challenge = newChallenge();
  const id = newId('chl');
  await ctx.deps.identity.putChallenge({
    id,
    purpose: 'signin',
    subject: 'signin',
    value: challenge,
    createdAt: ctx.now.toISOString(),
    expiresAt: new Date(ctx.now.getTime() + CHALLENGE_TTL_MS).toISOString(),
  });
  return { challenge_id: id, options: await passkeyAuthenticationOptions({ userId: null, challenge, deps: ctx.deps }) };
}

/** Step 2: verifies the assertion (user verification required) and starts a session in the person's account. */
export async function signInWithPasskey(
  ctx: PublicOpContext,
  raw: unknown,
): Promise<{ session: WebSession; token: string }> {
  const input = parseInput(PasskeySignInInput, raw);
  const refused = new LetKiteError('unauthenticated', 'the passkey sign-in did not verify; try again');
  const challenge = await ctx.deps.identity.takeChallenge(
    input.challenge_id,
    'signin',
    'signin',
    ctx.now.toISOString(),
  );
  if (!challenge) throw refused;
  const passkey = await ctx.deps.identity.getPasskey(input.response.id);
  if (!passkey) throw refused;
  const ok = await verifyPasskeyAssertion({
    userId: passkey.userId,
    expectedChallenge: challenge.value,
    response: input.response,
    deps: ctx.deps,
  });
  if (!ok) throw refused;
  return startSessionFor(ctx, passkey.userId, 'passkey');
}

/** A session in the person's first account; refused if they belong to none any more. */
export async function startSessionFor(
  ctx: PublicOpContext,
  userId: string,
  method: WebSession['method'],
): Promise<{ session: WebSession; token: string }> {
  const [membership] = await ctx.deps.identity.membershipsOf(userId);
  if (!membership) throw new LetKiteError('forbidden', 'you are not a member of any account');
  const { session, token } = newWebSession({
    userId,
    accountId: membership.accountId,
    method,
    userAgent: ctx.userAgent,
    now: ctx.now,
  });
  await ctx.deps.identity.createSession(session, signInAudit(session, actorLabel({ kind: 'person', id: userId })));
  return { session, token };
}
