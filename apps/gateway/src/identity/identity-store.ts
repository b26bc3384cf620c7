import type { Account, ApiToken, AuditEventInput, Role, User } from '../store/types';

/**
 * The identity domain's store (docs/design/store-domains.md): credentials, browser sessions, one-time links,
 * custom roles and groups. Methods that change state take the audit event(s) to write in the same transaction.
 * SQLite implements it in `store/sqlite/sqlite-identity-store.ts`, PostgreSQL in `store/postgres/pg-identity-store.ts`.
 */

export interface StoredPasskey {
  id: string;
  userId: string;
  name: string;
  publicKey: string;
  counter: number;
  transports: string[];
  backedUp: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface PasswordState {
  userId: string;
  passwordHash: string;
}

export interface TotpState {
  userId: string;
  secret: string;
  lastStep: number | null;
}

export const sessionMethods = ['passkey', 'password_totp', 'recovery_code'] as const;
export type SessionMethod = (typeof sessionMethods)[number];

export interface WebSession {
  id: string;
  userId: string;
  accountId: string;
  csrfToken: string;
  method: SessionMethod;
  userAgent: string | null;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

export interface CustomRole {
  id: string;
  accountId: string;
  name: string;
  permissions: string[];
  createdAt: string;
}

export interface MembershipView {
  accountId: string;
  accountName: string;
  userId: string;
  role: Role;
  customRole: CustomRole | null;
}

export interface MemberView {
  user: User;
  role: Role;
  customRole: CustomRole | null;
  createdAt: string;
  hasPasskey: boolean;
  hasPassword: boolean;
}

export interface Group {
  id: string;
  accountId: string;
  name: string;
  createdAt: string;
  memberIds: string[];
  machineIds: string[];
}

export interface Invitation {
  id: string;
  accountId: string;
  email: string;
  role: Role;
  customRoleId: string | null;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

export interface SetupLink {
  id: string;
  accountId: string;
  userId: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

export interface Challenge {
  id: string;
  purpose: string;
  subject: string;
  value: string;
  expiresAt: string;
}

/** Which credentials a person has set up. */
export interface CredentialSummary {
  passkeys: number;
  password: boolean;
  totp: boolean;
  recoveryCodesLeft: number;
}

/** A new person's credentials, written together with their membership when a setup link or invitation is used. */
export interface NewCredentials {
  passkey?: StoredPasskey;
  password?: { passwordHash: string; totpSecret: string; totpStep: number; recoveryCodeHashes: string[] };
}

/** What a used setup link or invitation becomes: a person with credentials, a membership and a first session. */
export interface Onboarding {
  /** `setup` fills in the bootstrap owner; `invitation` creates a new user (or reuses one signed in). */
  via: { kind: 'setup'; setupLinkId: string } | { kind: 'invitation'; invitationId: string };
  user: User;
  /** True when `user` already exists (the owner row, or a signed-in person accepting an invitation). */
  existingUser: boolean;
  membership: { accountId: string; role: Role; customRoleId: string | null };
  credentials: NewCredentials;
  session: WebSession & { tokenHash: string };
  audit: AuditEventInput[];
}

export interface IdentityStore {
  getAccount(id: string): Promise<Account | null>;
  findUserByEmail(email: string): Promise<User | null>;
  updateUser(userId: string, change: { name?: string; email?: string | null }, audit: AuditEventInput): Promise<void>;
  credentialSummary(userId: string): Promise<CredentialSummary>;

  membershipsOf(userId: string): Promise<MembershipView[]>;
  membership(accountId: string, userId: string): Promise<MembershipView | null>;
  listMembers(accountId: string): Promise<MemberView[]>;
  /** Refuses with `conflict` (deciding inside its transaction) when it would leave the account without an owner. */
  setMemberRole(
    accountId: string,
    userId: string,
    role: Role,
    customRoleId: string | null,
    audit: AuditEventInput,
  ): Promise<void>;
  /**
   * Removes a membership with its custom role, group memberships, web sessions and API tokens in that account;
   * refuses with `conflict` (deciding inside its transaction) when it would leave the account without an owner.
   */
  removeMember(accountId: string, userId: string, at: string, audit: AuditEventInput): Promise<void>;
  countOwners(accountId: string): Promise<number>;

  listPasskeys(userId: string): Promise<StoredPasskey[]>;
  getPasskey(id: string): Promise<StoredPasskey | null>;
  addPasskey(passkey: StoredPasskey, audit: AuditEventInput): Promise<void>;
  /** Records a use; refuses (false) when the new counter does not move forward (a cloned authenticator). */
  recordPasskeyUse(id: string, counter: number, at: string): Promise<boolean>;
  deletePasskey(userId: string, id: string, audit: AuditEventInput): Promise<boolean>;

  getPassword(userId: string): Promise<PasswordState | null>;
  /** Sets the password and TOTP secret together (TOTP is the second factor of a password sign-in). */
  setPasswordAndTotp(
    userId: string,
    value: { passwordHash: string; totpSecret: string; totpStep: number; recoveryCodeHashes: string[] },
    at: string,
    audit: AuditEventInput,
  ): Promise<void>;
  removePasswordAndTotp(userId: string, audit: AuditEventInput): Promise<void>;

  getTotp(userId: string): Promise<TotpState | null>;
  /** Marks a time step used; false if it (or a later one) was used already, so a code works once. */
  consumeTotpStep(userId: string, step: number): Promise<boolean>;
  /** Marks a recovery code used; false if unknown or used. */
  consumeRecoveryCode(userId: string, codeHash: string, at: string): Promise<boolean>;
  replaceRecoveryCodes(userId: string, codeHashes: string[], audit: AuditEventInput): Promise<void>;

  createSession(session: WebSession & { tokenHash: string }, audit: AuditEventInput): Promise<void>;
  findSessionByTokenHash(tokenHash: string): Promise<WebSession | null>;
  touchSession(id: string, at: string): Promise<void>;
  switchSessionAccount(id: string, accountId: string): Promise<void>;
  listSessions(userId: string): Promise<WebSession[]>;
  revokeSession(id: string, at: string, audit: AuditEventInput | null): Promise<boolean>;

  putChallenge(challenge: Challenge & { createdAt: string }): Promise<void>;
  /** Reads a live challenge without using it up (a TOTP secret the person may need several tries to confirm). */
  peekChallenge(id: string, purpose: string, subject: string, now: string): Promise<Challenge | null>;
  /** Returns and uses up a challenge; null if unknown, used, expired, or bound to another purpose or subject. */
  takeChallenge(id: string, purpose: string, subject: string, now: string): Promise<Challenge | null>;

  createSetupLink(link: SetupLink & { tokenHash: string }, audit: AuditEventInput): Promise<void>;
  findSetupLinkByHash(tokenHash: string): Promise<SetupLink | null>;

  createInvitation(invitation: Invitation & { tokenHash: string }, audit: AuditEventInput): Promise<void>;
  findInvitationByHash(tokenHash: string): Promise<Invitation | null>;
  listInvitations(accountId: string): Promise<Invitation[]>;
  revokeInvitation(accountId: string, id: string, at: string, audit: AuditEventInput): Promise<boolean>;

  /**
   * Uses the link or invitation and writes everything in one transaction; false if it was used meanwhile. An
   * invitation for someone already in the account throws `conflict` (decided by the membership insert, so a role
   * is never overwritten) and leaves the invitation unused.
   */
  completeOnboarding(onboarding: Onboarding): Promise<boolean>;

  listCustomRoles(accountId: string): Promise<CustomRole[]>;
  getCustomRole(accountId: string, id: string): Promise<CustomRole | null>;
  saveCustomRole(role: CustomRole, audit: AuditEventInput): Promise<void>;
  deleteCustomRole(accountId: string, id: string, audit: AuditEventInput): Promise<boolean>;

  listGroups(accountId: string): Promise<Group[]>;
  getGroup(accountId: string, id: string): Promise<Group | null>;
  /** Creates or replaces a group with its members and claimed machines. */
  saveGroup(group: Group, audit: AuditEventInput): Promise<void>;
  deleteGroup(accountId: string, id: string, audit: AuditEventInput): Promise<boolean>;
  /** For each claimed machine of the account, the groups claiming it. */
  machineClaims(accountId: string): Promise<Map<string, string[]>>;
  groupsOfUser(accountId: string, userId: string): Promise<string[]>;

  listApiTokens(accountId: string, userId: string | null): Promise<(ApiToken & { lastUsedAt: string | null })[]>;
  revokeApiToken(accountId: string, id: string, at: string, audit: AuditEventInput): Promise<boolean>;
}
