import { Hono } from 'hono';
import { currentUser, requireUserForChange } from '../current-user';
import type { IdentityDeps } from '../op-context';
import { acceptInvitation } from '../ops/accept-invitation';
import { addPasskey, beginAddPasskey, removePasskey } from '../ops/manage-passkeys';
import { beginSetPassword, regenerateRecoveryCodes, removePassword, setPassword } from '../ops/manage-password';
import { revokeSession, signOut, switchAccount } from '../ops/manage-sessions';
import {
  beginOnboardingPasskey,
  beginOnboardingTotp,
  completeOnboardingPasskey,
  completeOnboardingPassword,
  inspectOnboarding,
} from '../ops/onboard';
import { beginPasskeySignIn, signInWithPasskey } from '../ops/sign-in-passkey';
import { signInWithPassword } from '../ops/sign-in-password';
import { clearSessionCookie } from '../session-cookie';
import { relyingParty } from '../verify-passkey';
import { publicOp, userOp } from './route-adapters';

/** Sign-in, first-run setup, invitations, the current session, and the person's own security settings. */
export function authRoutes(deps: IdentityDeps): Hono {
  const r = new Hono();

  r.get('/session', async (c) => {
    const user = await currentUser(c, deps);
    if (!user) return c.json({ user: null });
    const [me, accounts, credentials, sessions] = await Promise.all([
      deps.store.getUser(user.userId),
      deps.identity.membershipsOf(user.userId),
      deps.identity.credentialSummary(user.userId),
      deps.identity.listSessions(user.userId),
    ]);
    const session = sessions.find((s) => s.id === user.sessionId);
    return c.json({
      user: {
        id: user.userId,
        name: user.name,
        email: me?.email ?? null,
        role: user.role,
        custom_role: accounts.find((a) => a.accountId === user.accountId)?.customRole?.name ?? null,
        permissions: [...user.permissions].sort(),
        account_id: user.accountId,
      },
      accounts: accounts.map((a) => ({ id: a.accountId, name: a.accountName, role: a.role })),
      credentials: {
        passkeys: credentials.passkeys,
        password: credentials.password,
        recovery_codes_left: credentials.recoveryCodesLeft,
      },
      csrf_token: session?.csrfToken ?? null,
    });
  });

  r.post('/auth/passkey/options', publicOp(deps, beginPasskeySignIn));
  r.post('/auth/passkey', publicOp(deps, signInWithPasskey));
  r.post('/auth/password', publicOp(deps, signInWithPassword));
  r.post('/auth/sign-out', async (c) => {
    if (await currentUser(c, deps)) {
      const user = await requireUserForChange(c, deps);
      await signOut({ deps, user, now: deps.now() });
    }
    clearSessionCookie(c, deps.publicUrl);
    return c.json({ ok: true });
  });

  r.post('/onboard/inspect', publicOp(deps, inspectOnboarding));
  r.post('/onboard/passkey/options', publicOp(deps, beginOnboardingPasskey));
  r.post('/onboard/passkey', publicOp(deps, completeOnboardingPasskey));
  r.post('/onboard/totp', publicOp(deps, beginOnboardingTotp));
  r.post('/onboard/password', publicOp(deps, completeOnboardingPassword));
  r.post('/invitations/accept', userOp(deps, acceptInvitation));

  r.post('/session/account', userOp(deps, switchAccount));
  r.get(
    '/me/sessions',
    userOp(deps, async (ctx) => ({
      sessions: (await ctx.deps.identity.listSessions(ctx.user.userId)).map((s) => ({
        id: s.id,
        method: s.method,
        user_agent: s.userAgent,
        created_at: s.createdAt,
        last_seen_at: s.lastSeenAt,
        current: s.id === ctx.user.sessionId,
      })),
    })),
  );
  r.delete('/me/sessions/:id', userOp(deps, revokeSession));
  r.get(
    '/me/passkeys',
    userOp(deps, async (ctx) => ({
      passkeys: (await ctx.deps.identity.listPasskeys(ctx.user.userId)).map((p) => ({
        id: p.id,
        name: p.name,
        created_at: p.createdAt,
        last_used_at: p.lastUsedAt,
        backed_up: p.backedUp,
        // Public halves, so a machine's administrator can pin the passkey as an approver (DESIGN §6, §9).
        public_key: p.publicKey,
        rp_id: relyingParty(deps.publicUrl).rpID,
      })),
    })),
  );
  r.post('/me/passkeys/options', userOp(deps, beginAddPasskey));
  r.post('/me/passkeys', userOp(deps, addPasskey));
  r.delete('/me/passkeys/:id', userOp(deps, removePasskey));
  r.post('/me/password/totp', userOp(deps, beginSetPassword));
  r.post('/me/password', userOp(deps, setPassword));
  r.delete('/me/password', userOp(deps, removePassword));
  r.post('/me/recovery-codes', userOp(deps, regenerateRecoveryCodes));
  return r;
}
