import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { newId } from '../../auth/secrets';
import { actorLabel } from '../../services/actor';
import { defineService } from '../../services/define-service';
import type { AuditEventInput, User } from '../../store/types';
import type { NewCredentials, Onboarding, WebSession } from '../identity-store';
import type { AnonymousContext } from '../op-context';
import { hashPassword, Password } from '../passwords';
import {
  CHALLENGE_TTL_MS,
  newChallenge,
  passkeyRegistrationOptions,
  verifyPasskeyRegistration,
} from '../register-passkey';
import { newWebSession, signInAudit } from '../session-cookie';
import { newRecoveryCodes, newTotpSecret, totpStepOf } from '../verify-totp';
import { type OnboardingTicket, resolveOnboardingTicket } from './onboarding-ticket';

/**
 * First-run owner setup and accepting an invitation as a new person: both use a one-time link and end with a
 * person holding a passkey (or a password + TOTP), a membership and a signed-in session, written in one
 * transaction that also uses the link up.
 */

const Token = z.string().min(10).max(200);
const Person = {
  token: Token,
  name: z.string().trim().min(1, 'a name is required').max(100),
  email: z.email().max(254),
};

export const OnboardPasskeyOptionsInput = z.object(Person);
export const OnboardPasskeyInput = z.object({
  ...Person,
  challenge_id: z.string().min(1).max(100),
  passkey_name: z.string().trim().min(1).max(100).default('Passkey'),
  response: z.looseObject({ id: z.string() }),
});
export const OnboardTotpInput = z.object({ token: Token });
export const OnboardPasswordInput = z.object({
  ...Person,
  challenge_id: z.string().min(1).max(100),
  password: Password,
  code: z.string().trim().min(6).max(10),
});

/** What the page shows before the person chooses how to sign in. */
export const inspectOnboarding = defineService({
  name: 'inspectOnboarding',
  input: OnboardTotpInput,
  run: async (ctx: AnonymousContext, input) => {
    const { token } = input;
    const ticket = await resolveOnboardingTicket(ctx.deps, token, ctx.now);
    const existing = ticket.email ? await ctx.deps.identity.findUserByEmail(ticket.email) : null;
    const customRole = ticket.customRoleId
      ? await ctx.deps.identity.getCustomRole(ticket.accountId, ticket.customRoleId)
      : null;
    return {
      kind: ticket.kind,
      account_name: ticket.accountName,
      role: customRole?.name ?? ticket.role,
      email: ticket.email,
      /** An invitation for someone who already has a LetKite sign-in: they accept it signed in. */
      existing_user: existing !== null,
    };
  },
});

async function ticketFor(ctx: AnonymousContext, token: string, email: string): Promise<OnboardingTicket> {
  const ticket = await resolveOnboardingTicket(ctx.deps, token, ctx.now);
  if (ticket.email !== null && ticket.email.toLowerCase() !== email.toLowerCase()) {
    throw new LetKiteError('invalid_params', `this invitation is for ${ticket.email}, not "${email}"`);
  }
  const holder = await ctx.deps.identity.findUserByEmail(email);
  if (holder && holder.id !== ticket.userId) {
    throw new LetKiteError('conflict', `"${email}" already has a LetKite sign-in; sign in to accept`, {
      existing_user: true,
    });
  }
  return ticket;
}

/** Stores a challenge bound to the link (its subject is the ticket) and answers its id. */
async function putTicketChallenge(
  ctx: AnonymousContext,
  ticket: OnboardingTicket,
  purpose: 'onboard-passkey' | 'onboard-totp',
  value: string,
  ttlMs = CHALLENGE_TTL_MS,
): Promise<string> {
  const id = newId('chl');
  await ctx.deps.identity.putChallenge({
    id,
    purpose,
    subject: ticket.id,
    value,
    createdAt: ctx.now.toISOString(),
    expiresAt: new Date(ctx.now.getTime() + ttlMs).toISOString(),
  });
  return id;
}

/** Passkey step 1: registration options; the challenge (and the new user's id) is bound to the link. */
export const beginOnboardingPasskey = defineService({
  name: 'beginOnboardingPasskey',
  input: OnboardPasskeyOptionsInput,
  run: async (ctx: AnonymousContext, input) => {
    const ticket = await ticketFor(ctx, input.token, input.email);
    const userId = ticket.userId ?? newId('usr');
    const challenge = newChallenge();
    const id = await putTicketChallenge(ctx, ticket, 'onboard-passkey', JSON.stringify({ challenge, userId }));
    const options = await passkeyRegistrationOptions({
      userId,
      userName: input.email,
      displayName: input.name,
      challenge,
      deps: ctx.deps,
    });
    return { challenge_id: id, options };
  },
});

/** Passkey step 2: verifies the new passkey and completes the link. */
export const completeOnboardingPasskey = defineService({
  name: 'completeOnboardingPasskey',
  input: OnboardPasskeyInput,
  run: async (ctx: AnonymousContext, input) => {
    const ticket = await ticketFor(ctx, input.token, input.email);
    const c = await ctx.deps.identity.takeChallenge(
      input.challenge_id,
      'onboard-passkey',
      ticket.id,
      ctx.now.toISOString(),
    );
    if (!c) throw new LetKiteError('unauthenticated', 'the passkey prompt expired; try again');
    const { challenge, userId } = JSON.parse(c.value) as { challenge: string; userId: string };
    const passkey = await verifyPasskeyRegistration({
      userId,
      name: input.passkey_name,
      challenge,
      response: input.response,
      deps: ctx.deps,
    });
    return finish(ctx, ticket, { id: userId, name: input.name, email: input.email }, { passkey }, 'passkey');
  },
});

/** Password step 1: a TOTP secret for the authenticator app, kept until confirmed by a code. */
export const beginOnboardingTotp = defineService({
  name: 'beginOnboardingTotp',
  input: OnboardTotpInput,
  run: async (ctx: AnonymousContext, input) => {
    const ticket = await resolveOnboardingTicket(ctx.deps, input.token, ctx.now);
    const { secret, uri } = newTotpSecret(ticket.email ?? ticket.accountName);
    // Longer than a passkey prompt: the person may need a while to set up the authenticator app.
    const id = await putTicketChallenge(ctx, ticket, 'onboard-totp', secret, 30 * 60_000);
    return { challenge_id: id, secret, uri };
  },
});

/** Password step 2: the password and the first authenticator code; returns the recovery codes once. */
export const completeOnboardingPassword = defineService({
  name: 'completeOnboardingPassword',
  input: OnboardPasswordInput,
  run: async (ctx: AnonymousContext, input) => {
    const ticket = await ticketFor(ctx, input.token, input.email);
    const c = await ctx.deps.identity.peekChallenge(
      input.challenge_id,
      'onboard-totp',
      ticket.id,
      ctx.now.toISOString(),
    );
    if (!c) throw new LetKiteError('invalid_params', 'the authenticator setup expired; start again');
    const step = totpStepOf(c.value, input.code, ctx.now);
    if (step === null)
      throw new LetKiteError('invalid_params', 'the authenticator code does not match; try the next one');
    const recovery = newRecoveryCodes();
    const userId = ticket.userId ?? newId('usr');
    const result = await finish(
      ctx,
      ticket,
      { id: userId, name: input.name, email: input.email },
      {
        password: {
          passwordHash: await hashPassword(input.password),
          totpSecret: c.value,
          totpStep: step,
          recoveryCodeHashes: recovery.hashes,
        },
      },
      'password_totp',
    );
    await ctx.deps.identity.takeChallenge(c.id, 'onboard-totp', ticket.id, ctx.now.toISOString());
    return { ...result, recovery_codes: recovery.codes };
  },
});

async function finish(
  ctx: AnonymousContext,
  ticket: OnboardingTicket,
  person: { id: string; name: string; email: string },
  credentials: NewCredentials,
  method: WebSession['method'],
): Promise<{ session: WebSession; token: string }> {
  const existing = ticket.userId === null ? null : await ctx.deps.store.getUser(ticket.userId);
  const user: User = {
    id: person.id,
    name: person.name,
    email: person.email,
    createdAt: existing?.createdAt ?? ctx.now.toISOString(),
  };
  const { session, token } = newWebSession({
    userId: user.id,
    accountId: ticket.accountId,
    method,
    userAgent: ctx.caller?.userAgent ?? null,
    now: ctx.now,
  });
  const at = ctx.now.toISOString();
  const audit: AuditEventInput[] = [
    {
      accountId: ticket.accountId,
      at,
      actor: actorLabel({ kind: 'person', id: user.id }),
      action: ticket.kind === 'setup' ? 'owner.setup' : 'invitation.accept',
      target: ticket.kind === 'setup' ? user.id : ticket.id,
      outcome: 'ok',
      details: { role: ticket.role, method, email: person.email },
    },
    signInAudit(session, actorLabel({ kind: 'person', id: user.id })),
  ];
  const onboarding: Onboarding = {
    via:
      ticket.kind === 'setup'
        ? { kind: 'setup', setupLinkId: ticket.id }
        : { kind: 'invitation', invitationId: ticket.id },
    user,
    existingUser: existing !== null,
    membership: { accountId: ticket.accountId, role: ticket.role, customRoleId: ticket.customRoleId },
    credentials,
    session,
    audit,
  };
  if (!(await ctx.deps.identity.completeOnboarding(onboarding))) {
    throw new LetKiteError('invalid_token', 'this link was used meanwhile; ask for a new one');
  }
  return { session, token };
}
