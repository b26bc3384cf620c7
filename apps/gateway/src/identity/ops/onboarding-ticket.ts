import { LetKiteError } from '@letkite/protocol';
import { hashSecret } from '../../auth/secrets';
import type { Role } from '../../store/types';
import type { IdentityDeps } from '../op-context';

/** A one-time link being used: the owner-setup link, or an invitation. */
export interface OnboardingTicket {
  kind: 'setup' | 'invitation';
  /** The setup link's or invitation's id (challenges are bound to it). */
  id: string;
  accountId: string;
  accountName: string;
  role: Role;
  customRoleId: string | null;
  /** Fixed for an invitation; chosen by the owner at setup. */
  email: string | null;
  /** The user the link completes: the bootstrap owner at setup; none (a new user) for an invitation. */
  userId: string | null;
}

/** Resolves a setup or invitation token, or `invalid_token` (unknown, used, expired or revoked). */
export async function resolveOnboardingTicket(deps: IdentityDeps, token: string, now: Date): Promise<OnboardingTicket> {
  const refused = new LetKiteError('invalid_token', 'this link is unknown, used or expired; ask for a new one');
  if (typeof token !== 'string' || token.length > 200) throw refused;
  const at = now.toISOString();
  if (token.startsWith('lksetup_')) {
    const link = await deps.identity.findSetupLinkByHash(hashSecret(token));
    if (!link || link.usedAt !== null || link.expiresAt <= at) throw refused;
    const account = await deps.identity.getAccount(link.accountId);
    if (!account) throw refused;
    return {
      kind: 'setup',
      id: link.id,
      accountId: account.id,
      accountName: account.name,
      role: 'owner',
      customRoleId: null,
      email: null,
      userId: link.userId,
    };
  }
  if (token.startsWith('lkinv_')) {
    const inv = await deps.identity.findInvitationByHash(hashSecret(token));
    if (!inv || inv.acceptedAt !== null || inv.revokedAt !== null || inv.expiresAt <= at) throw refused;
    const account = await deps.identity.getAccount(inv.accountId);
    if (!account) throw refused;
    return {
      kind: 'invitation',
      id: inv.id,
      accountId: account.id,
      accountName: account.name,
      role: inv.role,
      customRoleId: inv.customRoleId,
      email: inv.email,
      userId: null,
    };
  }
  throw refused;
}
