import { randomBytes } from 'node:crypto';
import { hashSecret, newId } from '../../auth/secrets';
import { actorLabel } from '../../services/actor';
import type { IdentityStore } from '../identity-store';

/** How long the first-run owner setup link works. */
export const SETUP_LINK_TTL_MS = 30 * 60_000;

/**
 * The one-time owner setup link `npm start` prints while the owner has no way to sign in yet; null once they do
 * (then the link would be a way to take the account over). A new link retires the previous one.
 */
export async function createOwnerSetupLink(
  ctx: { identity: IdentityStore; now: Date; publicUrl: string },
  input: { accountId: string; ownerId: string },
): Promise<{ url: string; expiresAt: string } | null> {
  const creds = await ctx.identity.credentialSummary(input.ownerId);
  if (creds.passkeys > 0 || creds.password) return null;
  const token = `lksetup_${randomBytes(32).toString('base64url')}`;
  const id = newId('stl');
  const createdAt = ctx.now.toISOString();
  const expiresAt = new Date(ctx.now.getTime() + SETUP_LINK_TTL_MS).toISOString();
  await ctx.identity.createSetupLink(
    {
      id,
      accountId: input.accountId,
      userId: input.ownerId,
      tokenHash: hashSecret(token),
      createdAt,
      expiresAt,
      usedAt: null,
    },
    {
      accountId: input.accountId,
      at: createdAt,
      actor: actorLabel({ kind: 'system', task: 'start' }),
      action: 'setup_link.create',
      target: id,
      outcome: 'ok',
      details: { expires_at: expiresAt },
    },
  );
  return { url: `${ctx.publicUrl}/setup#${token}`, expiresAt };
}
