import { and, asc, count, eq, gt, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type {
  Challenge,
  CredentialSummary,
  CustomRole,
  Group,
  IdentityStore,
  Invitation,
  MembershipView,
  MemberView,
  Onboarding,
  PasswordState,
  SetupLink,
  StoredPasskey,
  TotpState,
  WebSession,
} from '../../identity/identity-store';
import { TotpSeedCipher } from '../../identity/totp-seed-cipher';
import {
  challengeFromRow,
  claimsByMachine,
  groupsFromRows,
  invitationFromRow,
  joinedAlready,
  lastOwnerConflict,
  listedApiTokenFromRow,
  memberFromRow,
  membershipFromRow,
  passkeyFromRow,
  passkeyToRow,
  recoveryCodeRows,
  roleFromRow,
  roleToRow,
  sessionFromRow,
} from '../identity-rows';
import { isSeedChallenge, TotpSeedSealing } from '../totp-seed-sealing';
import type { Account, AuditEventInput, Role, User } from '../types';
import { insertAudit, sqliteClientOf } from './audit';
import * as id from './identity-schema';
import * as core from './schema';
import { migrateSqliteDomain, type SqliteStore } from './sqlite-store';

type Tx = Parameters<Parameters<SqliteStore['db']['transaction']>[0]>[0];
type Db = SqliteStore['db'] | Tx;

/** The shared chained audit insert (store/sqlite/audit.ts), in the caller's transaction. */
function audit(db: Db, e: AuditEventInput): void {
  insertAudit(sqliteClientOf(db), e);
}

/**
 * Takes the account row's write lock first (a no-op update): on PostgreSQL it serializes the owner changes of one
 * account, so the owner count read by `keepsAnOwner` in the next statement (READ COMMITTED: a fresh snapshot) is
 * current; SQLite's write lock already does the same.
 */
function lockAccount(db: Db, accountId: string): void {
  db.update(core.accounts)
    .set({ name: sql`${core.accounts.name}` })
    .where(eq(core.accounts.id, accountId))
    .run();
}

/** The condition of a demotion or removal: the row is no owner, or another owner remains. */
function keepsAnOwner(accountId: string) {
  return or(
    sql`${core.memberships.role} <> 'owner'`,
    sql`(SELECT count(*) FROM ${core.memberships} AS o WHERE o.account_id = ${accountId} AND o.role = 'owner') > 1`,
  );
}

/** After a guarded write matched nothing: `conflict` when the member exists (so it was the last owner). */
function refuseLastOwner(db: Db, accountId: string, userId: string): void {
  const m = db
    .select({ role: core.memberships.role })
    .from(core.memberships)
    .where(and(eq(core.memberships.accountId, accountId), eq(core.memberships.userId, userId)))
    .get();
  if (m) throw lastOwnerConflict();
}

/** A challenge of this purpose and subject, not used and not expired at `now`. */
function challengeIsLive(challengeId: string, purpose: string, subject: string, now: string) {
  return and(
    eq(id.authChallenges.id, challengeId),
    eq(id.authChallenges.purpose, purpose),
    eq(id.authChallenges.subject, subject),
    isNull(id.authChallenges.usedAt),
    gt(id.authChallenges.expiresAt, now),
  );
}

/** The identity store on the embedded SQLite database, sharing its connection (and transactions) with core. */
export class SqliteIdentityStore implements IdentityStore {
  private readonly db: SqliteStore['db'];
  private readonly seeds: TotpSeedSealing;

  /**
   * `seeds` seals TOTP secrets at rest; plaintext ones from before are sealed on open. Without it (a tool that
   * opens the database only for tokens or machines) TOTP secrets can be neither read nor written.
   */
  constructor(store: SqliteStore, seeds: TotpSeedCipher | null = null) {
    this.db = store.db;
    this.seeds = new TotpSeedSealing(seeds);
    migrateSqliteDomain(store.db, 'sqlite-identity', '__drizzle_migrations_identity');
    if (seeds && this.sealPlaintextSeeds() > 0) {
      // Move the sealed pages into the database file now, so the old plaintext ones do not linger there.
      store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    }
  }

  /** Seals every TOTP secret (and pending setup secret) still stored in plaintext, in one transaction. */
  private sealPlaintextSeeds(): number {
    let sealed = 0;
    this.db.transaction((tx) => {
      for (const r of tx.select().from(id.totpSecrets).all()) {
        if (TotpSeedCipher.isSealed(r.secret)) continue;
        tx.update(id.totpSecrets)
          .set({ secret: this.seeds.sealSeed(r.userId, r.secret) })
          .where(eq(id.totpSecrets.userId, r.userId))
          .run();
        sealed += 1;
      }
      for (const r of tx.select().from(id.authChallenges).all()) {
        if (!isSeedChallenge(r.purpose) || TotpSeedCipher.isSealed(r.value)) continue;
        tx.update(id.authChallenges)
          .set({ value: this.seeds.challengeValue(r) })
          .where(eq(id.authChallenges.id, r.id))
          .run();
        sealed += 1;
      }
    });
    return sealed;
  }

  async getAccount(accountId: string): Promise<Account | null> {
    return this.db.select().from(core.accounts).where(eq(core.accounts.id, accountId)).get() ?? null;
  }

  async findUserByEmail(email: string): Promise<User | null> {
    return (
      this.db.select().from(core.users).where(sql`lower(${core.users.email}) = ${email.toLowerCase()}`).get() ?? null
    );
  }

  async updateUser(userId: string, change: { name?: string; email?: string | null }, a: AuditEventInput) {
    this.db.transaction((tx) => {
      tx.update(core.users).set(change).where(eq(core.users.id, userId)).run();
      audit(tx, a);
    });
  }

  async credentialSummary(userId: string): Promise<CredentialSummary> {
    const pk = this.db.select({ n: count() }).from(id.passkeys).where(eq(id.passkeys.userId, userId)).get();
    const pw = this.db.select().from(id.userPasswords).where(eq(id.userPasswords.userId, userId)).get();
    const totp = this.db.select().from(id.totpSecrets).where(eq(id.totpSecrets.userId, userId)).get();
    const rc = this.db
      .select({ n: count() })
      .from(id.recoveryCodes)
      .where(and(eq(id.recoveryCodes.userId, userId), isNull(id.recoveryCodes.usedAt)))
      .get();
    return { passkeys: pk?.n ?? 0, password: !!pw, totp: !!totp, recoveryCodesLeft: rc?.n ?? 0 };
  }

  private customRoleRowOf(accountId: string, userId: string): typeof id.customRoles.$inferSelect | null {
    const r = this.db
      .select({ role: id.customRoles })
      .from(id.memberCustomRoles)
      .innerJoin(id.customRoles, eq(id.customRoles.id, id.memberCustomRoles.roleId))
      .where(and(eq(id.memberCustomRoles.accountId, accountId), eq(id.memberCustomRoles.userId, userId)))
      .get();
    return r?.role ?? null;
  }

  async membershipsOf(userId: string): Promise<MembershipView[]> {
    const rows = this.db
      .select({ m: core.memberships, accountName: core.accounts.name })
      .from(core.memberships)
      .innerJoin(core.accounts, eq(core.accounts.id, core.memberships.accountId))
      .where(eq(core.memberships.userId, userId))
      .orderBy(asc(core.memberships.createdAt))
      .all();
    return rows.map((r) => membershipFromRow(userId, { ...r, role: this.customRoleRowOf(r.m.accountId, userId) }));
  }

  async membership(accountId: string, userId: string): Promise<MembershipView | null> {
    return (await this.membershipsOf(userId)).find((m) => m.accountId === accountId) ?? null;
  }

  async listMembers(accountId: string): Promise<MemberView[]> {
    // One query for the whole list, as on PostgreSQL (it runs on every gated tool call through the approver
    // directory); per-member credential and role reads made it 1+5N.
    const rows = this.db
      .select({
        m: core.memberships,
        u: core.users,
        role: id.customRoles,
        hasPasskey: sql<number>`EXISTS (SELECT 1 FROM ${id.passkeys} WHERE ${id.passkeys.userId} = ${core.users.id})`,
        hasPassword: sql<number>`EXISTS (SELECT 1 FROM ${id.userPasswords} WHERE ${id.userPasswords.userId} = ${core.users.id})`,
      })
      .from(core.memberships)
      .innerJoin(core.users, eq(core.users.id, core.memberships.userId))
      .leftJoin(
        id.memberCustomRoles,
        and(
          eq(id.memberCustomRoles.accountId, core.memberships.accountId),
          eq(id.memberCustomRoles.userId, core.memberships.userId),
        ),
      )
      .leftJoin(id.customRoles, eq(id.customRoles.id, id.memberCustomRoles.roleId))
      .where(eq(core.memberships.accountId, accountId))
      .orderBy(asc(core.memberships.createdAt))
      .all();
    return rows.map((r) => memberFromRow({ ...r, hasPasskey: r.hasPasskey === 1, hasPassword: r.hasPassword === 1 }));
  }

  async setMemberRole(accountId: string, userId: string, role: Role, customRoleId: string | null, a: AuditEventInput) {
    this.db.transaction((tx) => {
      lockAccount(tx, accountId);
      const changed = tx
        .update(core.memberships)
        .set({ role })
        .where(
          and(
            eq(core.memberships.accountId, accountId),
            eq(core.memberships.userId, userId),
            role === 'owner' ? undefined : keepsAnOwner(accountId),
          ),
        )
        .run();
      if (changed.changes !== 1) refuseLastOwner(tx, accountId, userId);
      this.assignCustomRole(tx, accountId, userId, customRoleId);
      audit(tx, a);
    });
  }

  private assignCustomRole(tx: Db, accountId: string, userId: string, customRoleId: string | null): void {
    tx.delete(id.memberCustomRoles)
      .where(and(eq(id.memberCustomRoles.accountId, accountId), eq(id.memberCustomRoles.userId, userId)))
      .run();
    if (customRoleId !== null)
      tx.insert(id.memberCustomRoles).values({ accountId, userId, roleId: customRoleId }).run();
  }

  async removeMember(accountId: string, userId: string, at: string, a: AuditEventInput) {
    this.db.transaction((tx) => {
      lockAccount(tx, accountId);
      const gone = tx
        .delete(core.memberships)
        .where(
          and(eq(core.memberships.accountId, accountId), eq(core.memberships.userId, userId), keepsAnOwner(accountId)),
        )
        .run();
      if (gone.changes !== 1) refuseLastOwner(tx, accountId, userId);
      this.assignCustomRole(tx, accountId, userId, null);
      const groupIds = tx
        .select({ id: id.groups.id })
        .from(id.groups)
        .where(eq(id.groups.accountId, accountId))
        .all()
        .map((g) => g.id);
      if (groupIds.length > 0) {
        tx.delete(id.groupMembers)
          .where(and(inArray(id.groupMembers.groupId, groupIds), eq(id.groupMembers.userId, userId)))
          .run();
      }
      tx.update(id.webSessions)
        .set({ revokedAt: at })
        .where(
          and(
            eq(id.webSessions.accountId, accountId),
            eq(id.webSessions.userId, userId),
            isNull(id.webSessions.revokedAt),
          ),
        )
        .run();
      tx.update(core.apiTokens)
        .set({ revokedAt: at })
        .where(
          and(
            eq(core.apiTokens.accountId, accountId),
            eq(core.apiTokens.userId, userId),
            isNull(core.apiTokens.revokedAt),
          ),
        )
        .run();
      audit(tx, a);
    });
  }

  async countOwners(accountId: string): Promise<number> {
    return (
      this.db
        .select({ n: count() })
        .from(core.memberships)
        .where(and(eq(core.memberships.accountId, accountId), eq(core.memberships.role, 'owner')))
        .get()?.n ?? 0
    );
  }

  async listPasskeys(userId: string): Promise<StoredPasskey[]> {
    return this.db
      .select()
      .from(id.passkeys)
      .where(eq(id.passkeys.userId, userId))
      .orderBy(asc(id.passkeys.createdAt))
      .all()
      .map(passkeyFromRow);
  }

  async getPasskey(passkeyId: string): Promise<StoredPasskey | null> {
    const r = this.db.select().from(id.passkeys).where(eq(id.passkeys.id, passkeyId)).get();
    return r ? passkeyFromRow(r) : null;
  }

  async addPasskey(passkey: StoredPasskey, a: AuditEventInput) {
    this.db.transaction((tx) => {
      tx.insert(id.passkeys).values(passkeyToRow(passkey)).run();
      audit(tx, a);
    });
  }

  async recordPasskeyUse(passkeyId: string, counter: number, at: string): Promise<boolean> {
    // Authenticators that keep no counter always report 0; any that do must move forward.
    const r = this.db
      .update(id.passkeys)
      .set({ counter, lastUsedAt: at })
      .where(
        and(
          eq(id.passkeys.id, passkeyId),
          counter === 0 ? eq(id.passkeys.counter, 0) : lt(id.passkeys.counter, counter),
        ),
      )
      .run();
    return r.changes === 1;
  }

  async deletePasskey(userId: string, passkeyId: string, a: AuditEventInput): Promise<boolean> {
    return this.db.transaction((tx) => {
      const r = tx
        .delete(id.passkeys)
        .where(and(eq(id.passkeys.id, passkeyId), eq(id.passkeys.userId, userId)))
        .run();
      if (r.changes !== 1) return false;
      audit(tx, a);
      return true;
    });
  }

  async getPassword(userId: string): Promise<PasswordState | null> {
    const r = this.db.select().from(id.userPasswords).where(eq(id.userPasswords.userId, userId)).get();
    return r ? { userId, passwordHash: r.passwordHash } : null;
  }

  private writePasswordAndTotp(
    tx: Db,
    userId: string,
    v: { passwordHash: string; totpSecret: string; totpStep: number; recoveryCodeHashes: string[] },
    at: string,
  ): void {
    tx.insert(id.userPasswords)
      .values({ userId, passwordHash: v.passwordHash, updatedAt: at })
      .onConflictDoUpdate({ target: id.userPasswords.userId, set: { passwordHash: v.passwordHash, updatedAt: at } })
      .run();
    const secret = this.seeds.sealSeed(userId, v.totpSecret);
    tx.insert(id.totpSecrets)
      .values({ userId, secret, lastStep: v.totpStep, createdAt: at })
      .onConflictDoUpdate({
        target: id.totpSecrets.userId,
        set: { secret, lastStep: v.totpStep, createdAt: at },
      })
      .run();
    this.writeRecoveryCodes(tx, userId, v.recoveryCodeHashes);
  }

  private writeRecoveryCodes(tx: Db, userId: string, hashes: string[]): void {
    tx.delete(id.recoveryCodes).where(eq(id.recoveryCodes.userId, userId)).run();
    for (const row of recoveryCodeRows(userId, hashes)) tx.insert(id.recoveryCodes).values(row).run();
  }

  async setPasswordAndTotp(
    userId: string,
    v: { passwordHash: string; totpSecret: string; totpStep: number; recoveryCodeHashes: string[] },
    at: string,
    a: AuditEventInput,
  ) {
    this.db.transaction((tx) => {
      this.writePasswordAndTotp(tx, userId, v, at);
      audit(tx, a);
    });
  }

  async removePasswordAndTotp(userId: string, a: AuditEventInput) {
    this.db.transaction((tx) => {
      tx.delete(id.userPasswords).where(eq(id.userPasswords.userId, userId)).run();
      tx.delete(id.totpSecrets).where(eq(id.totpSecrets.userId, userId)).run();
      tx.delete(id.recoveryCodes).where(eq(id.recoveryCodes.userId, userId)).run();
      audit(tx, a);
    });
  }

  async getTotp(userId: string): Promise<TotpState | null> {
    const r = this.db.select().from(id.totpSecrets).where(eq(id.totpSecrets.userId, userId)).get();
    if (!r) return null;
    const { state, reseal } = this.seeds.totpFromRow(r);
    // A row written by an older process without the key is plaintext: seal it now, answer the seed.
    if (reseal !== null) {
      this.db.update(id.totpSecrets).set({ secret: reseal }).where(eq(id.totpSecrets.userId, userId)).run();
    }
    return state;
  }

  async consumeTotpStep(userId: string, step: number): Promise<boolean> {
    const r = this.db
      .update(id.totpSecrets)
      .set({ lastStep: step })
      .where(
        and(eq(id.totpSecrets.userId, userId), or(isNull(id.totpSecrets.lastStep), lt(id.totpSecrets.lastStep, step))),
      )
      .run();
    return r.changes === 1;
  }

  async consumeRecoveryCode(userId: string, codeHash: string, at: string): Promise<boolean> {
    const r = this.db
      .update(id.recoveryCodes)
      .set({ usedAt: at })
      .where(
        and(
          eq(id.recoveryCodes.userId, userId),
          eq(id.recoveryCodes.codeHash, codeHash),
          isNull(id.recoveryCodes.usedAt),
        ),
      )
      .run();
    return r.changes === 1;
  }

  async replaceRecoveryCodes(userId: string, codeHashes: string[], a: AuditEventInput) {
    this.db.transaction((tx) => {
      this.writeRecoveryCodes(tx, userId, codeHashes);
      audit(tx, a);
    });
  }

  async createSession(session: WebSession & { tokenHash: string }, a: AuditEventInput) {
    this.db.transaction((tx) => {
      tx.insert(id.webSessions).values(session).run();
      audit(tx, a);
    });
  }

  async findSessionByTokenHash(tokenHash: string): Promise<WebSession | null> {
    const r = this.db.select().from(id.webSessions).where(eq(id.webSessions.tokenHash, tokenHash)).get();
    return r ? sessionFromRow(r) : null;
  }

  async touchSession(sessionId: string, at: string) {
    this.db.update(id.webSessions).set({ lastSeenAt: at }).where(eq(id.webSessions.id, sessionId)).run();
  }

  async switchSessionAccount(sessionId: string, accountId: string) {
    this.db.update(id.webSessions).set({ accountId }).where(eq(id.webSessions.id, sessionId)).run();
  }

  async listSessions(userId: string): Promise<WebSession[]> {
    return this.db
      .select()
      .from(id.webSessions)
      .where(and(eq(id.webSessions.userId, userId), isNull(id.webSessions.revokedAt)))
      .orderBy(asc(id.webSessions.createdAt))
      .all()
      .map(sessionFromRow);
  }

  async revokeSession(sessionId: string, at: string, a: AuditEventInput | null): Promise<boolean> {
    return this.db.transaction((tx) => {
      const r = tx
        .update(id.webSessions)
        .set({ revokedAt: at })
        .where(and(eq(id.webSessions.id, sessionId), isNull(id.webSessions.revokedAt)))
        .run();
      if (r.changes !== 1) return false;
      if (a) audit(tx, a);
      return true;
    });
  }

  async putChallenge(c: Challenge & { createdAt: string }) {
    this.db.transaction((tx) => {
      // Expired rows are garbage: sweep them whenever a new one is written.
      tx.delete(id.authChallenges).where(lt(id.authChallenges.expiresAt, c.createdAt)).run();
      const value = this.seeds.challengeValue(c);
      tx.insert(id.authChallenges)
        .values({ ...c, value, usedAt: null })
        .run();
    });
  }

  async peekChallenge(challengeId: string, purpose: string, subject: string, now: string): Promise<Challenge | null> {
    const r = this.db
      .select()
      .from(id.authChallenges)
      .where(challengeIsLive(challengeId, purpose, subject, now))
      .get();
    return r ? this.seeds.openChallenge(challengeFromRow(r)) : null;
  }

  async takeChallenge(challengeId: string, purpose: string, subject: string, now: string): Promise<Challenge | null> {
    const r = this.db
      .update(id.authChallenges)
      .set({ usedAt: now })
      .where(challengeIsLive(challengeId, purpose, subject, now))
      .returning()
      .get();
    return r ? this.seeds.openChallenge(challengeFromRow(r)) : null;
  }

  async createSetupLink(link: SetupLink & { tokenHash: string }, a: AuditEventInput) {
    this.db.transaction((tx) => {
      // Only the newest link works: printing a new one retires the old. The account row's lock serializes two
      // gateways starting at once (the second retires the first's link), and the partial unique index on open
      // links holds it on any dialect.
      lockAccount(tx, link.accountId);
      tx.update(id.setupLinks)
        .set({ usedAt: link.createdAt })
        .where(and(eq(id.setupLinks.accountId, link.accountId), isNull(id.setupLinks.usedAt)))
        .run();
      tx.insert(id.setupLinks).values(link).run();
      audit(tx, a);
    });
  }

  async findSetupLinkByHash(tokenHash: string): Promise<SetupLink | null> {
    const r = this.db.select().from(id.setupLinks).where(eq(id.setupLinks.tokenHash, tokenHash)).get();
    if (!r) return null;
    const { tokenHash: _h, ...rest } = r;
    return rest;
  }

  async createInvitation(inv: Invitation & { tokenHash: string }, a: AuditEventInput) {
    this.db.transaction((tx) => {
      tx.insert(id.invitations)
        .values({ ...inv, acceptedBy: null })
        .run();
      audit(tx, a);
    });
  }

  async findInvitationByHash(tokenHash: string): Promise<Invitation | null> {
    const r = this.db.select().from(id.invitations).where(eq(id.invitations.tokenHash, tokenHash)).get();
    return r ? invitationFromRow(r) : null;
  }

  async listInvitations(accountId: string): Promise<Invitation[]> {
    return this.db
      .select()
      .from(id.invitations)
      .where(eq(id.invitations.accountId, accountId))
      .orderBy(asc(id.invitations.createdAt))
      .all()
      .map(invitationFromRow);
  }

  async revokeInvitation(accountId: string, invitationId: string, at: string, a: AuditEventInput): Promise<boolean> {
    return this.db.transaction((tx) => {
      const r = tx
        .update(id.invitations)
        .set({ revokedAt: at })
        .where(
          and(
            eq(id.invitations.id, invitationId),
            eq(id.invitations.accountId, accountId),
            isNull(id.invitations.acceptedAt),
            isNull(id.invitations.revokedAt),
          ),
        )
        .run();
      if (r.changes !== 1) return false;
      audit(tx, a);
      return true;
    });
  }

  async completeOnboarding(o: Onboarding): Promise<boolean> {
    return this.db.transaction((tx) => {
      const at = o.session.createdAt;
      if (o.via.kind === 'setup') {
        const used = tx
          .update(id.setupLinks)
          .set({ usedAt: at })
          .where(
            and(eq(id.setupLinks.id, o.via.setupLinkId), isNull(id.setupLinks.usedAt), gt(id.setupLinks.expiresAt, at)),
          )
          .run();
        if (used.changes !== 1) return false;
      } else {
        const used = tx
          .update(id.invitations)
          .set({ acceptedAt: at, acceptedBy: o.user.id })
          .where(
            and(
              eq(id.invitations.id, o.via.invitationId),
              isNull(id.invitations.acceptedAt),
              isNull(id.invitations.revokedAt),
              gt(id.invitations.expiresAt, at),
            ),
          )
          .run();
        if (used.changes !== 1) return false;
      }
      if (o.existingUser) {
        tx.update(core.users).set({ name: o.user.name, email: o.user.email }).where(eq(core.users.id, o.user.id)).run();
      } else {
        tx.insert(core.users).values(o.user).run();
      }
      const { accountId, role, customRoleId } = o.membership;
      // The insert decides whether the person is already a member (see joinedAlready), never a read before it.
      const joined = tx
        .insert(core.memberships)
        .values({ accountId, userId: o.user.id, role, createdAt: at })
        .onConflictDoNothing({ target: [core.memberships.accountId, core.memberships.userId] })
        .run();
      if (joined.changes !== 1 && o.via.kind === 'invitation') throw joinedAlready();
      this.assignCustomRole(tx, accountId, o.user.id, customRoleId);
      if (o.credentials.passkey) {
        tx.insert(id.passkeys).values(passkeyToRow(o.credentials.passkey)).run();
      }
      if (o.credentials.password) this.writePasswordAndTotp(tx, o.user.id, o.credentials.password, at);
      tx.insert(id.webSessions).values(o.session).run();
      for (const a of o.audit) audit(tx, a);
      return true;
    });
  }

  async listCustomRoles(accountId: string): Promise<CustomRole[]> {
    return this.db
      .select()
      .from(id.customRoles)
      .where(eq(id.customRoles.accountId, accountId))
      .orderBy(asc(id.customRoles.name))
      .all()
      .map(roleFromRow);
  }

  async getCustomRole(accountId: string, roleId: string): Promise<CustomRole | null> {
    const r = this.db
      .select()
      .from(id.customRoles)
      .where(and(eq(id.customRoles.accountId, accountId), eq(id.customRoles.id, roleId)))
      .get();
    return r ? roleFromRow(r) : null;
  }

  async saveCustomRole(role: CustomRole, a: AuditEventInput) {
    this.db.transaction((tx) => {
      const row = roleToRow(role);
      tx.insert(id.customRoles)
        .values(row)
        .onConflictDoUpdate({ target: id.customRoles.id, set: { name: row.name, permissions: row.permissions } })
        .run();
      audit(tx, a);
    });
  }

  async deleteCustomRole(accountId: string, roleId: string, a: AuditEventInput): Promise<boolean> {
    return this.db.transaction((tx) => {
      tx.delete(id.memberCustomRoles)
        .where(and(eq(id.memberCustomRoles.accountId, accountId), eq(id.memberCustomRoles.roleId, roleId)))
        .run();
      tx.update(id.invitations)
        .set({ revokedAt: a.at })
        .where(
          and(
            eq(id.invitations.accountId, accountId),
            eq(id.invitations.customRoleId, roleId),
            isNull(id.invitations.acceptedAt),
            isNull(id.invitations.revokedAt),
          ),
        )
        .run();
      const r = tx
        .delete(id.customRoles)
        .where(and(eq(id.customRoles.accountId, accountId), eq(id.customRoles.id, roleId)))
        .run();
      if (r.changes !== 1) return false;
      audit(tx, a);
      return true;
    });
  }

  async listGroups(accountId: string): Promise<Group[]> {
    const rows = this.db
      .select()
      .from(id.groups)
      .where(eq(id.groups.accountId, accountId))
      .orderBy(asc(id.groups.name))
      .all();
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const members = this.db.select().from(id.groupMembers).where(inArray(id.groupMembers.groupId, ids)).all();
    const claims = this.db.select().from(id.groupMachines).where(inArray(id.groupMachines.groupId, ids)).all();
    return groupsFromRows(rows, members, claims);
  }

  async getGroup(accountId: string, groupId: string): Promise<Group | null> {
    return (await this.listGroups(accountId)).find((g) => g.id === groupId) ?? null;
  }

  async saveGroup(g: Group, a: AuditEventInput) {
    this.db.transaction((tx) => {
      // The upsert comes first: it locks the group row (PostgreSQL too), so concurrent saves of one group replace
      // its members one after the other instead of interleaving into primary-key conflicts.
      tx.insert(id.groups)
        .values({ id: g.id, accountId: g.accountId, name: g.name, createdAt: g.createdAt })
        .onConflictDoUpdate({ target: id.groups.id, set: { name: g.name } })
        .run();
      tx.delete(id.groupMembers).where(eq(id.groupMembers.groupId, g.id)).run();
      tx.delete(id.groupMachines).where(eq(id.groupMachines.groupId, g.id)).run();
      for (const userId of new Set(g.memberIds)) tx.insert(id.groupMembers).values({ groupId: g.id, userId }).run();
      for (const machineId of new Set(g.machineIds)) {
        tx.insert(id.groupMachines).values({ groupId: g.id, machineId }).run();
      }
      audit(tx, a);
    });
  }

  async deleteGroup(accountId: string, groupId: string, a: AuditEventInput): Promise<boolean> {
    return this.db.transaction((tx) => {
      // The group row first: a group of another account matches nothing, and its members and claims stay.
      const r = tx
        .delete(id.groups)
        .where(and(eq(id.groups.accountId, accountId), eq(id.groups.id, groupId)))
        .run();
      if (r.changes !== 1) return false;
      tx.delete(id.groupMembers).where(eq(id.groupMembers.groupId, groupId)).run();
      tx.delete(id.groupMachines).where(eq(id.groupMachines.groupId, groupId)).run();
      audit(tx, a);
      return true;
    });
  }

  async machineClaims(accountId: string): Promise<Map<string, string[]>> {
    const rows = this.db
      .select({ groupId: id.groupMachines.groupId, machineId: id.groupMachines.machineId })
      .from(id.groupMachines)
      .innerJoin(id.groups, eq(id.groups.id, id.groupMachines.groupId))
      .where(eq(id.groups.accountId, accountId))
      .all();
    return claimsByMachine(rows);
  }

  async groupsOfUser(accountId: string, userId: string): Promise<string[]> {
    return this.db
      .select({ id: id.groups.id })
      .from(id.groupMembers)
      .innerJoin(id.groups, eq(id.groups.id, id.groupMembers.groupId))
      .where(and(eq(id.groups.accountId, accountId), eq(id.groupMembers.userId, userId)))
      .all()
      .map((r) => r.id);
  }

  async listApiTokens(accountId: string, userId: string | null) {
    const where =
      userId === null
        ? eq(core.apiTokens.accountId, accountId)
        : and(eq(core.apiTokens.accountId, accountId), eq(core.apiTokens.userId, userId));
    return this.db
      .select()
      .from(core.apiTokens)
      .where(where)
      .orderBy(asc(core.apiTokens.createdAt))
      .all()
      .map(listedApiTokenFromRow);
  }

  async revokeApiToken(accountId: string, tokenId: string, at: string, a: AuditEventInput): Promise<boolean> {
    return this.db.transaction((tx) => {
      const r = tx
        .update(core.apiTokens)
        .set({ revokedAt: at })
        .where(
          and(
            eq(core.apiTokens.id, tokenId),
            eq(core.apiTokens.accountId, accountId),
            isNull(core.apiTokens.revokedAt),
          ),
        )
        .run();
      if (r.changes !== 1) return false;
      audit(tx, a);
      return true;
    });
  }
}
