import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { newId } from '../auth/secrets';
import type { SignedInUser } from '../identity/current-user';
import type { Approvals } from './approvals';
import { pushEndpointProblem } from './web-push-sender';

const base64url = z.string().regex(/^[A-Za-z0-9_-]+={0,2}$/, 'must be base64url');

/** A browser's `PushSubscription.toJSON()`. */
export const PushSubscriptionInput = z.object({
  endpoint: z.string().min(1).max(2048),
  keys: z.object({ p256dh: base64url.min(80).max(100), auth: base64url.min(16).max(32) }),
});

/** Subscribes this browser (of the signed-in person) to approval notifications. */
export async function subscribePush(
  deps: { approvals: Approvals; now: () => Date },
  user: SignedInUser,
  body: unknown,
  userAgent: string | undefined,
): Promise<{ id: string }> {
  const parsed = PushSubscriptionInput.safeParse(body);
  if (!parsed.success)
    throw new LetKiteError('invalid_params', `not a push subscription: ${z.prettifyError(parsed.error)}`);
  const problem = pushEndpointProblem(parsed.data.endpoint, deps.approvals.allowInsecurePushLoopback);
  if (problem) throw new LetKiteError('invalid_params', problem);
  const at = deps.now().toISOString();
  const id = newId('psh');
  await deps.approvals.store.savePushSubscription(
    {
      id,
      accountId: user.accountId,
      userId: user.userId,
      endpoint: parsed.data.endpoint,
      p256dh: parsed.data.keys.p256dh,
      auth: parsed.data.keys.auth,
      userAgent: userAgent?.slice(0, 300) ?? null,
      createdAt: at,
    },
    {
      accountId: user.accountId,
      at,
      actor: `user:${user.userId}`,
      action: 'push.subscribe',
      target: id,
      outcome: 'ok',
      details: { origin: new URL(parsed.data.endpoint).origin },
    },
  );
  return { id };
}

/** Removes this browser's subscription (only the person's own). */
export async function unsubscribePush(
  deps: { approvals: Approvals; now: () => Date },
  user: SignedInUser,
  body: unknown,
): Promise<{ removed: boolean }> {
  const parsed = z.object({ endpoint: z.string().min(1).max(2048) }).safeParse(body);
  if (!parsed.success) throw new LetKiteError('invalid_params', 'give the subscription endpoint');
  const removed = await deps.approvals.store.deletePushSubscription(user.userId, parsed.data.endpoint, {
    accountId: user.accountId,
    at: deps.now().toISOString(),
    actor: `user:${user.userId}`,
    action: 'push.unsubscribe',
    outcome: 'ok',
  });
  return { removed };
}
