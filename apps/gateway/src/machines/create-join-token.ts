import { hashSecret, newId, newSecret } from '../auth/secrets';
import type { Store } from '../store/types';

/** Default lifetime of a join token: long enough to paste a command, short enough not to linger. */
export const JOIN_TOKEN_TTL_MS = 15 * 60_000;

/** Makes a one-time join token for enrolling one machine; returns the secret once. */
export async function createJoinToken(
  ctx: { store: Store; now: Date },
  input: { accountId: string; actor: string; ttlMs?: number },
): Promise<{ id: string; token: string; expiresAt: string }> {
  const token = newSecret('lkj_');
  const id = newId('jtk');
  const createdAt = ctx.now.toISOString();
  const expiresAt = new Date(ctx.now.getTime() + (input.ttlMs ?? JOIN_TOKEN_TTL_MS)).toISOString();
  await ctx.store.createJoinToken(
    {
      id,
      accountId: input.accountId,
      tokenHash: hashSecret(token),
      createdBy: input.actor,
      createdAt,
      expiresAt,
      usedAt: null,
      machineId: null,
    },
    {
      accountId: input.accountId,
      at: createdAt,
      actor: input.actor,
      action: 'join_token.create',
      target: id,
      outcome: 'ok',
      details: { expires_at: expiresAt },
    },
  );
  return { id, token, expiresAt };
}
