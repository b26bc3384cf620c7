import { Hono } from 'hono';
import { userContext } from '../../services/adapters/rest';
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
import { beforeSignIn, identityRoutes, view } from './route-adapters';

/** Sign-in, first-run setup, invitations, the current session, and the person's own security settings. */
export function authRoutes(deps: IdentityDeps): Hono {
  const r = new Hono();
  const route = identityRoutes(deps);

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

  r.post('/auth/passkey/options', route.public(beforeSignIn('beginPasskeySignIn', beginPasskeySignIn)));
  r.post('/auth/passkey', route.public(beforeSignIn('signInWithPasskey', signInWithPasskey)));
  r.post('/auth/password', route.public(beforeSignIn('signInWithPassword', signInWithPassword)));
  r.post('/auth/sign-out', async (c) => {
    if (await currentUser(c, deps)) {
      const user = await requireUserForChange(c, deps);
      await signOut.run(userContext(c, deps, user), {});
    }
    clearSessionCookie(c, deps.publicUrl);
    return c.json({ ok: true });
  });

  r.post('/onboard/inspect', route.public(inspectOnboarding));
  r.post('/onboard/passkey/options', route.public(beginOnboardingPasskey));
  r.post('/onboard/passkey', route.public(completeOnboardingPasskey));
  r.post('/onboard/totp', route.public(beginOnboardingTotp));
  r.post('/onboard/password', route.public(completeOnboardingPassword));
  r.post('/invitations/accept', route.user(acceptInvitation));

  r.post('/session/account', route.user(switchAccount));
  r.get(
    '/me/sessions',
    route.user(
      view('listSessions', undefined, async (ctx) => ({
        sessions: (await ctx.deps.identity.listSessions(ctx.actor.user.userId)).map((s) => ({
          id: s.id,
          method: s.method,
          user_agent: s.userAgent,
          created_at: s.createdAt,
          last_seen_at: s.lastSeenAt,
          current: s.id === ctx.actor.user.sessionId,
        })),
      })),
    ),
  );
  r.delete('/me/sessions/:id', route.user(revokeSession));
  r.get(
    '/me/passkeys',
    route.user(
      view('listPasskeys', undefined, async (ctx) => ({
        passkeys: (await ctx.deps.identity.listPasskeys(ctx.actor.user.userId)).map((p) => ({
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
    ),
  );
  r.post('/me/passkeys/options', route.user(beginAddPasskey));
  r.post('/me/passkeys', route.user(addPasskey));
  r.delete('/me/passkeys/:id', route.user(removePasskey));
  r.post('/me/password/totp', route.user(beginSetPassword));
  r.post('/me/password', route.user(setPassword));
  r.delete('/me/password', route.user(removePassword));
  r.post('/me/recovery-codes', route.user(regenerateRecoveryCodes));
  return r;
}
