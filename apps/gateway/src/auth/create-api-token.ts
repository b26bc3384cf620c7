import { LetKiteError } from '@letkite/protocol';
import type { Grant, Store } from '../store/types';
import { hashSecret, newId, newSecret } from './secrets';

export interface CreateApiTokenInput {
  accountId: string;
  userId: string;
  name: string;
  grant: Grant;
  /** Lifetime in ms; none means it lasts until revoked. */
  expiresInMs?: number;
  /** Who asked, for the audit log. */
  actor: string;
}

/** Creates an API token and returns the secret — the only time it is ever shown. */
export async function createApiToken(
  ctx: { store: Store; now: Date },
  input: CreateApiTokenInput,
): Promise<{ id: string; token: string; expiresAt: string | null }> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100) {
    throw new LetKiteError('invalid_params', `token name "${input.name}" must be 1 to 100 characters`);
  }
  const role = await ctx.store.roleOf(input.accountId, input.userId);
  if (!role) throw new LetKiteError('forbidden', 'only a member of the account can hold a token');
  const token = newSecret('lk_');
  const id = newId('tok');
  const createdAt = ctx.now.toISOString();
  const expiresAt =
    input.expiresInMs === undefined ? null : new Date(ctx.now.getTime() + input.expiresInMs).toISOString();
  await ctx.store.createApiToken(
    {
      id,
      accountId: input.accountId,
      userId: input.userId,
      name,
      grant: input.grant,
      createdAt,
      expiresAt,
      revokedAt: null,
      tokenHash: hashSecret(token),
    },
    {
      accountId: input.accountId,
      at: createdAt,
      actor: input.actor,
      action: 'api_token.create',
      target: id,
      outcome: 'ok',
      details: { name, expires_at: expiresAt, grant: input.grant },
    },
  );
  return { id, token, expiresAt };
}
