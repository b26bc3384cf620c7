import { and, asc, count, eq, getTableColumns, gt, inArray, isNull, lt, or, type SQL, sql } from 'drizzle-orm';
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
import type { TotpSeedCipher } from '../../identity/totp-seed-cipher';
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
import { TotpSeedSealing } from '../totp-seed-sealing';
import type { Account, AuditEventInput, Role, User } from '../types';
import * as id from './identity-schema';
import { insertAudit } from './pg-audit';
import type { PgDatabase, PgDb, PgTx } from './pg-database';
import * as core from './schema';

type Db = PgDb | PgTx;

/**
 * Takes the account row's lock first (a no-op update held to commit): it serializes one account's owner changes
 * and owner setup links across gateways, so the owner count that `keepsAnOwner` reads in the next statement
 * (READ COMMITTED: a fresh snapshot per statement) sees a concurrent demotion that committed meanwhile.
 */
async function lockAccount(db: Db, accountId: string): Promise<void> {
  await db
    .update(core.accounts)
    .set({ name: sql`${core.accounts.name}` })
    .where(eq(core.accounts.id, accountId));
}

/** The condition of a demotion or removal: the row is no owner, or another owner remains. */
function keepsAnOwner(accountId: string) {
  return or(
    sql`${core.memberships.role} <> 'owner'`,
    sql`(SELECT count(*) FROM ${core.memberships} AS o WHERE o.account_id = ${accountId} AND o.role = 'owner') > 1`,
  );
}

/** After a guarded write matched nothing: `conflict` when the member exists (so it was the last owner). */
async function refuseLastOwner(db: Db, accountId: string, userId: string): Promise<void> {
  const [m] = await db
    .select({ role: core.memberships.role })
    .from(core.memberships)
    .where(and(eq(core.memberships.accountId, accountId), eq(core.memberships.userId, userId)));
  if (m) throw lastOwnerConflict();
}

/** Joins a membership to its custom role assignment (left joined: most members have none). */
const customRoleOfMembership = and(
  eq(id.memberCustomRoles.accountId, core.memberships.accountId),
  eq(id.memberCustomRoles.userId, core.memberships.userId),
);

const p = sql.placeholder;

/**
 * The reads every web request (session cookie, membership) and every OAuth MCP request (membership) makes,
 * prepared under fixed names (node-postgres prepares each once per connection) instead of planned per call.
 */
function prepareHotQueries(db: PgDb) {
  return {
    sessionByHash: db
      .select()
      .from(id.webSessions)
      .where(eq(id.webSessions.tokenHash, p('hash')))
      .prepare('identity_session_by_hash'),
    touchSession: db
      .update(id.webSessions)
      .set({ lastSeenAt: sql`${p('at')}` })
      .where(eq(id.webSessions.id, p('id')))
      .prepare('identity_touch_session'),
    membershipsOf: db
      .select({ m: core.memberships, accountName: core.accounts.name, role: id.customRoles })
      .from(core.memberships)
      .innerJoin(core.accounts, eq(core.accounts.id, core.memberships.accountId))
      .leftJoin(id.memberCustomRoles, customRoleOfMembership)
      .leftJoin(id.customRoles, eq(id.customRoles.id, id.memberCustomRoles.roleId))
      .where(eq(core.memberships.userId, p('userId')))
      .orderBy(asc(core.memberships.createdAt))
      .prepare('identity_memberships_of'),
  };
}

/**
 * The identity store on PostgreSQL (cluster mode), sharing the core store's pool so a change and its audit row
 * commit together. Every decision that guards an invariant is the write itself (docs/design/store-domains.md,
 * "Decisions inside transactions"): a conditional UPDATE whose returned rows decide, the account row locked first
 * for owner changes, upserts against the same unique indexes as SQLite. Migrations are applied by
 * `PgDatabase.open`.
 */
export class PgIdentityStore implements IdentityStore {
  private readonly db: PgDb;
  private readonly seeds: TotpSeedSealing;

  /**
   * `seeds` seals TOTP secrets at rest. Without it (a tool that opens the database only for tokens or machines)
   * TOTP secrets can be neither read nor written. Unlike SQLite there is no sealing pass at open: this store
   * never writes a plaintext seed, and no PostgreSQL database predates sealing.
   */
  constructor(
    private readonly database: PgDatabase,
    seeds: TotpSeedCipher | null = null,
  ) {
    this.db = database.db;
    this.seeds = new TotpSeedSealing(seeds);
    this.prepared = prepareHotQueries(database.db);
  }

  private readonly prepared: ReturnType<typeof prepareHotQueries>;

  async getAccount(accountId: string): Promise<Account | null> {
    const [r] = await this.db.select().from(core.accounts).where(eq(core.accounts.id, accountId));
    return r ?? null;
  }

  async findUserByEmail(email: string): Promise<User | null> {
    const [r] = await this.db
      .select()
      .from(core.users)
      .where(sql`lower(${core.users.email}) = ${email.toLowerCase()}`)
      .limit(1);
    return r ?? null;
  }

  async updateUser(userId: string, change: { name?: string; email?: string | null }, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      await tx.update(core.users).set(change).where(eq(core.users.id, userId));
      await insertAudit(tx, a);
    });
  }

  async credentialSummary(userId: string): Promise<CredentialSummary> {
    // One round trip instead of four.
    const rows = await this.db.execute<{ passkeys: string; password: boolean; totp: boolean; codes: string }>(sql`
      SELECT (SELECT count(*) FROM ${id.passkeys} WHERE user_id = ${userId}) AS passkeys,
             EXISTS (SELECT 1 FROM ${id.userPasswords} WHERE user_id = ${userId}) AS password,
             EXISTS (SELECT 1 FROM ${id.totpSecrets} WHERE user_id = ${userId}) AS totp,
             (SELECT count(*) FROM ${id.recoveryCodes} WHERE user_id = ${userId} AND used_at IS NULL) AS codes`);
    const r = rows.rows[0];
    return {
      passkeys: Number(r?.passkeys ?? 0),
      password: r?.password === true,
      totp: r?.totp === true,
      recoveryCodesLeft: Number(r?.codes ?? 0),
    };
  }

  async membershipsOf(userId: string): Promise<MembershipView[]> {
    const rows = await this.prepared.membershipsOf.execute({ userId });
    return rows.map((r) => membershipFromRow(userId, r));
  }

  async membership(accountId: string, userId: string): Promise<MembershipView | null> {
    return (await this.membershipsOf(userId)).find((m) => m.accountId === accountId) ?? null;
  }

  async listMembers(accountId: string): Promise<MemberView[]> {
    // One query for the whole list (it runs on every gated tool call through the approver directory).
    const rows = await this.db
      .select({
        m: core.memberships,
        u: core.users,
        role: id.customRoles,
        hasPasskey: sql<boolean>`EXISTS (SELECT 1 FROM ${id.passkeys} WHERE ${id.passkeys.userId} = ${core.users.id})`,
        hasPassword: sql<boolean>`EXISTS (SELECT 1 FROM ${id.userPasswords} WHERE ${id.userPasswords.userId} = ${core.users.id})`,
      })
      .from(core.memberships)
      .innerJoin(core.users, eq(core.users.id, core.memberships.userId))
      .leftJoin(id.memberCustomRoles, customRoleOfMembership)
      .leftJoin(id.customRoles, eq(id.customRoles.id, id.memberCustomRoles.roleId))
      .where(eq(core.memberships.accountId, accountId))
      .orderBy(asc(core.memberships.createdAt));
    return rows.map((r) =>
      memberFromRow({ ...r, hasPasskey: r.hasPasskey === true, hasPassword: r.hasPassword === true }),
    );
  }

  async setMemberRole(accountId: string, userId: string, role: Role, customRoleId: string | null, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      await lockAccount(tx, accountId);
      const changed = await tx
        .update(core.memberships)
        .set({ role })
        .where(
          and(
            eq(core.memberships.accountId, accountId),
            eq(core.memberships.userId, userId),
            role === 'owner' ? undefined : keepsAnOwner(accountId),
          ),
        )
        .returning({ userId: core.memberships.userId });
      if (changed.length !== 1) await refuseLastOwner(tx, accountId, userId);
      await this.assignCustomRole(tx, accountId, userId, customRoleId);
      await insertAudit(tx, a);
    });
  }

  private async assignCustomRole(tx: Db, accountId: string, userId: string, customRoleId: string | null) {
    if (customRoleId === null) {
      await tx
        .delete(id.memberCustomRoles)
        .where(and(eq(id.memberCustomRoles.accountId, accountId), eq(id.memberCustomRoles.userId, userId)));
      return;
    }
    await tx
      .insert(id.memberCustomRoles)
      .values({ accountId, userId, roleId: customRoleId })
      .onConflictDoUpdate({
        target: [id.memberCustomRoles.accountId, id.memberCustomRoles.userId],
        set: { roleId: customRoleId },
      });
  }

  async removeMember(accountId: string, userId: string, at: string, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      await lockAccount(tx, accountId);
      const gone = await tx
        .delete(core.memberships)
        .where(
          and(eq(core.memberships.accountId, accountId), eq(core.memberships.userId, userId), keepsAnOwner(accountId)),
        )
        .returning({ userId: core.memberships.userId });
      if (gone.length !== 1) await refuseLastOwner(tx, accountId, userId);
      await this.assignCustomRole(tx, accountId, userId, null);
      await tx
        .delete(id.groupMembers)
        .where(
          and(
            eq(id.groupMembers.userId, userId),
            sql`${id.groupMembers.groupId} IN (SELECT ${id.groups.id} FROM ${id.groups} WHERE ${id.groups.accountId} = ${accountId})`,
          ),
        );
      await tx
        .update(id.webSessions)
        .set({ revokedAt: at })
        .where(
          and(
            eq(id.webSessions.accountId, accountId),
            eq(id.webSessions.userId, userId),
            isNull(id.webSessions.revokedAt),
          ),
        );
      await tx
        .update(core.apiTokens)
        .set({ revokedAt: at })
        .where(
          and(
            eq(core.apiTokens.accountId, accountId),
            eq(core.apiTokens.userId, userId),
            isNull(core.apiTokens.revokedAt),
          ),
        );
      await insertAudit(tx, a);
    });
  }

  async countOwners(accountId: string): Promise<number> {
    const [r] = await this.db
      .select({ n: count() })
      .from(core.memberships)
      .where(and(eq(core.memberships.accountId, accountId), eq(core.memberships.role, 'owner')));
    return r?.n ?? 0;
  }

  async listPasskeys(userId: string): Promise<StoredPasskey[]> {
    const rows = await this.db
      .select()
      .from(id.passkeys)
      .where(eq(id.passkeys.userId, userId))
      .orderBy(asc(id.passkeys.createdAt));
    return rows.map(passkeyFromRow);
  }

  async getPasskey(passkeyId: string): Promise<StoredPasskey | null> {
    const [r] = await this.db.select().from(id.passkeys).where(eq(id.passkeys.id, passkeyId));
    return r ? passkeyFromRow(r) : null;
  }

  async addPasskey(passkey: StoredPasskey, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      await tx.insert(id.passkeys).values(passkeyToRow(passkey));
      await insertAudit(tx, a);
    });
  }

  async recordPasskeyUse(passkeyId: string, counter: number, at: string): Promise<boolean> {
    // Authenticators that keep no counter always report 0; any that do must move forward.
    const r = await this.db
      .update(id.passkeys)
      .set({ counter, lastUsedAt: at })
      .where(
        and(
          eq(id.passkeys.id, passkeyId),
          counter === 0 ? eq(id.passkeys.counter, 0) : lt(id.passkeys.counter, counter),
        ),
      )
      .returning({ id: id.passkeys.id });
    return r.length === 1;
  }

  async deletePasskey(userId: string, passkeyId: string, a: AuditEventInput): Promise<boolean> {
    return this.database.transaction(async (tx) => {
      const r = await tx
        .delete(id.passkeys)
        .where(and(eq(id.passkeys.id, passkeyId), eq(id.passkeys.userId, userId)))
        .returning({ id: id.passkeys.id });
      if (r.length !== 1) return false;
      await insertAudit(tx, a);
      return true;
    });
  }

  async getPassword(userId: string): Promise<PasswordState | null> {
    const [r] = await this.db.select().from(id.userPasswords).where(eq(id.userPasswords.userId, userId));
    return r ? { userId, passwordHash: r.passwordHash } : null;
  }

  private async writePasswordAndTotp(
    tx: Db,
    userId: string,
    v: { passwordHash: string; totpSecret: string; totpStep: number; recoveryCodeHashes: string[] },
    at: string,
  ): Promise<void> {
    await tx
      .insert(id.userPasswords)
      .values({ userId, passwordHash: v.passwordHash, updatedAt: at })
      .onConflictDoUpdate({ target: id.userPasswords.userId, set: { passwordHash: v.passwordHash, updatedAt: at } });
    const secret = this.seeds.sealSeed(userId, v.totpSecret);
    await tx
      .insert(id.totpSecrets)
      .values({ userId, secret, lastStep: v.totpStep, createdAt: at })
      .onConflictDoUpdate({ target: id.totpSecrets.userId, set: { secret, lastStep: v.totpStep, createdAt: at } });
    await this.writeRecoveryCodes(tx, userId, v.recoveryCodeHashes);
  }

  private async writeRecoveryCodes(tx: Db, userId: string, hashes: string[]): Promise<void> {
    await tx.delete(id.recoveryCodes).where(eq(id.recoveryCodes.userId, userId));
    if (hashes.length === 0) return;
    await tx.insert(id.recoveryCodes).values(recoveryCodeRows(userId, hashes));
  }

  async setPasswordAndTotp(
    userId: string,
    v: { passwordHash: string; totpSecret: string; totpStep: number; recoveryCodeHashes: string[] },
    at: string,
    a: AuditEventInput,
  ) {
    await this.database.transaction(async (tx) => {
      await this.writePasswordAndTotp(tx, userId, v, at);
      await insertAudit(tx, a);
    });
  }

  async removePasswordAndTotp(userId: string, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      await tx.delete(id.userPasswords).where(eq(id.userPasswords.userId, userId));
      await tx.delete(id.totpSecrets).where(eq(id.totpSecrets.userId, userId));
      await tx.delete(id.recoveryCodes).where(eq(id.recoveryCodes.userId, userId));
      await insertAudit(tx, a);
    });
  }

  async getTotp(userId: string): Promise<TotpState | null> {
    const [r] = await this.db.select().from(id.totpSecrets).where(eq(id.totpSecrets.userId, userId));
    if (!r) return null;
    const { state, reseal } = this.seeds.totpFromRow(r);
    // A plaintext row (written by hand or a tool without the key) is sealed now, as on SQLite; only if unchanged.
    if (reseal !== null) {
      await this.db
        .update(id.totpSecrets)
        .set({ secret: reseal })
        .where(and(eq(id.totpSecrets.userId, userId), eq(id.totpSecrets.secret, r.secret)));
    }
    return state;
  }

  async consumeTotpStep(userId: string, step: number): Promise<boolean> {
    // PostgreSQL re-checks the WHERE on the row a concurrent consumer just updated, so a step is used once.
    const r = await this.db
      .update(id.totpSecrets)
      .set({ lastStep: step })
      .where(
        and(eq(id.totpSecrets.userId, userId), or(isNull(id.totpSecrets.lastStep), lt(id.totpSecrets.lastStep, step))),
      )
      .returning({ userId: id.totpSecrets.userId });
    return r.length === 1;
  }

  async consumeRecoveryCode(userId: string, codeHash: string, at: string): Promise<boolean> {
    const r = await this.db
      .update(id.recoveryCodes)
      .set({ usedAt: at })
      .where(
        and(
          eq(id.recoveryCodes.userId, userId),
          eq(id.recoveryCodes.codeHash, codeHash),
          isNull(id.recoveryCodes.usedAt),
        ),
      )
      .returning({ id: id.recoveryCodes.id });
    // Two rows only if one code was issued twice in a set; SQLite's `changes === 1` treats that as unknown too.
    return r.length === 1;
  }

  async replaceRecoveryCodes(userId: string, codeHashes: string[], a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      await this.writeRecoveryCodes(tx, userId, codeHashes);
      await insertAudit(tx, a);
    });
  }

  async createSession(session: WebSession & { tokenHash: string }, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      await tx.insert(id.webSessions).values(session);
      await insertAudit(tx, a);
    });
  }

  async findSessionByTokenHash(tokenHash: string): Promise<WebSession | null> {
    const [r] = await this.prepared.sessionByHash.execute({ hash: tokenHash });
    return r ? sessionFromRow(r) : null;
  }

  async touchSession(sessionId: string, at: string) {
    await this.prepared.touchSession.execute({ id: sessionId, at });
  }

  async switchSessionAccount(sessionId: string, accountId: string) {
    await this.db.update(id.webSessions).set({ accountId }).where(eq(id.webSessions.id, sessionId));
  }

  async listSessions(userId: string): Promise<WebSession[]> {
    const rows = await this.db
      .select()
      .from(id.webSessions)
      .where(and(eq(id.webSessions.userId, userId), isNull(id.webSessions.revokedAt)))
      .orderBy(asc(id.webSessions.createdAt));
    return rows.map(sessionFromRow);
  }

  async revokeSession(sessionId: string, at: string, a: AuditEventInput | null): Promise<boolean> {
    return this.database.transaction(async (tx) => {
      const r = await tx
        .update(id.webSessions)
        .set({ revokedAt: at })
        .where(and(eq(id.webSessions.id, sessionId), isNull(id.webSessions.revokedAt)))
        .returning({ id: id.webSessions.id });
      if (r.length !== 1) return false;
      if (a) await insertAudit(tx, a);
      return true;
    });
  }

  async putChallenge(c: Challenge & { createdAt: string }) {
    const value = this.seeds.challengeValue(c);
    await this.database.transaction(async (tx) => {
      // Expired rows are garbage: sweep them whenever a new one is written.
      await tx.delete(id.authChallenges).where(lt(id.authChallenges.expiresAt, c.createdAt));
      await tx.insert(id.authChallenges).values({ ...c, value, usedAt: null });
    });
  }

  private challengeIsLive(challengeId: string, purpose: string, subject: string, now: string) {
    return and(
      eq(id.authChallenges.id, challengeId),
      eq(id.authChallenges.purpose, purpose),
      eq(id.authChallenges.subject, subject),
      isNull(id.authChallenges.usedAt),
      gt(id.authChallenges.expiresAt, now),
    );
  }

  async peekChallenge(challengeId: string, purpose: string, subject: string, now: string): Promise<Challenge | null> {
    const [r] = await this.db
      .select()
      .from(id.authChallenges)
      .where(this.challengeIsLive(challengeId, purpose, subject, now));
    return r ? this.seeds.openChallenge(challengeFromRow(r)) : null;
  }

  async takeChallenge(challengeId: string, purpose: string, subject: string, now: string): Promise<Challenge | null> {
    // One conditional UPDATE: of concurrent takers exactly one matches `used_at IS NULL` (PostgreSQL re-checks it
    // after the first commits).
    const [r] = await this.db
      .update(id.authChallenges)
      .set({ usedAt: now })
      .where(this.challengeIsLive(challengeId, purpose, subject, now))
      .returning();
    return r ? this.seeds.openChallenge(challengeFromRow(r)) : null;
  }

  async createSetupLink(link: SetupLink & { tokenHash: string }, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      // Only the newest link works: printing a new one retires the old. The account row's lock orders two gateways
      // starting at once (the second retires the first's link); the partial unique index on open links holds it.
      await lockAccount(tx, link.accountId);
      await tx
        .update(id.setupLinks)
        .set({ usedAt: link.createdAt })
        .where(and(eq(id.setupLinks.accountId, link.accountId), isNull(id.setupLinks.usedAt)));
      await tx.insert(id.setupLinks).values(link);
      await insertAudit(tx, a);
    });
  }

  async findSetupLinkByHash(tokenHash: string): Promise<SetupLink | null> {
    const { tokenHash: _h, ...columns } = getTableColumns(id.setupLinks);
    const [r] = await this.db.select(columns).from(id.setupLinks).where(eq(id.setupLinks.tokenHash, tokenHash));
    return r ?? null;
  }

  async createInvitation(inv: Invitation & { tokenHash: string }, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      await tx.insert(id.invitations).values({ ...inv, acceptedBy: null });
      await insertAudit(tx, a);
    });
  }

  async findInvitationByHash(tokenHash: string): Promise<Invitation | null> {
    const [r] = await this.db.select().from(id.invitations).where(eq(id.invitations.tokenHash, tokenHash));
    return r ? invitationFromRow(r) : null;
  }

  async listInvitations(accountId: string): Promise<Invitation[]> {
    const rows = await this.db
      .select()
      .from(id.invitations)
      .where(eq(id.invitations.accountId, accountId))
      .orderBy(asc(id.invitations.createdAt));
    return rows.map(invitationFromRow);
  }

  async revokeInvitation(accountId: string, invitationId: string, at: string, a: AuditEventInput): Promise<boolean> {
    return this.database.transaction(async (tx) => {
      const r = await tx
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
        .returning({ id: id.invitations.id });
      if (r.length !== 1) return false;
      await insertAudit(tx, a);
      return true;
    });
  }

  async completeOnboarding(o: Onboarding): Promise<boolean> {
    return this.database.transaction(async (tx) => {
      const at = o.session.createdAt;
      // The first write decides: a link or invitation used (or revoked) meanwhile matches nothing, and a
      // concurrent redemption waits on the row lock and then fails the re-checked WHERE.
      const used =
        o.via.kind === 'setup'
          ? await tx
              .update(id.setupLinks)
              .set({ usedAt: at })
              .where(
                and(
                  eq(id.setupLinks.id, o.via.setupLinkId),
                  isNull(id.setupLinks.usedAt),
                  gt(id.setupLinks.expiresAt, at),
                ),
              )
              .returning({ id: id.setupLinks.id })
          : await tx
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
              .returning({ id: id.invitations.id });
      if (used.length !== 1) return false;
      if (o.existingUser) {
        await tx.update(core.users).set({ name: o.user.name, email: o.user.email }).where(eq(core.users.id, o.user.id));
      } else {
        await tx.insert(core.users).values(o.user);
      }
      const { accountId, role, customRoleId } = o.membership;
      // The insert decides whether the person is already a member (a concurrent insert of the same pair waits for
      // the other to commit, then does nothing); a conflict rolls back, so the invitation stays unused and the role
      // given first is kept. The setup link's owner row already exists (bootstrap) and is kept as it is.
      const joined = await tx
        .insert(core.memberships)
        .values({ accountId, userId: o.user.id, role, createdAt: at })
        .onConflictDoNothing({ target: [core.memberships.accountId, core.memberships.userId] })
        .returning({ userId: core.memberships.userId });
      if (joined.length !== 1 && o.via.kind === 'invitation') throw joinedAlready();
      await this.assignCustomRole(tx, accountId, o.user.id, customRoleId);
      if (o.credentials.passkey) {
        await tx.insert(id.passkeys).values(passkeyToRow(o.credentials.passkey));
      }
      if (o.credentials.password) await this.writePasswordAndTotp(tx, o.user.id, o.credentials.password, at);
      await tx.insert(id.webSessions).values(o.session);
      for (const a of o.audit) await insertAudit(tx, a);
      return true;
    });
  }

  async listCustomRoles(accountId: string): Promise<CustomRole[]> {
    const rows = await this.db
      .select()
      .from(id.customRoles)
      .where(eq(id.customRoles.accountId, accountId))
      .orderBy(asc(id.customRoles.name));
    return rows.map(roleFromRow);
  }

  async getCustomRole(accountId: string, roleId: string): Promise<CustomRole | null> {
    const [r] = await this.db
      .select()
      .from(id.customRoles)
      .where(and(eq(id.customRoles.accountId, accountId), eq(id.customRoles.id, roleId)));
    return r ? roleFromRow(r) : null;
  }

  async saveCustomRole(role: CustomRole, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      const row = roleToRow(role);
      await tx
        .insert(id.customRoles)
        .values(row)
        .onConflictDoUpdate({ target: id.customRoles.id, set: { name: row.name, permissions: row.permissions } });
      await insertAudit(tx, a);
    });
  }

  async deleteCustomRole(accountId: string, roleId: string, a: AuditEventInput): Promise<boolean> {
    return this.database.transaction(async (tx) => {
      await tx
        .delete(id.memberCustomRoles)
        .where(and(eq(id.memberCustomRoles.accountId, accountId), eq(id.memberCustomRoles.roleId, roleId)));
      await tx
        .update(id.invitations)
        .set({ revokedAt: a.at })
        .where(
          and(
            eq(id.invitations.accountId, accountId),
            eq(id.invitations.customRoleId, roleId),
            isNull(id.invitations.acceptedAt),
            isNull(id.invitations.revokedAt),
          ),
        );
      const r = await tx
        .delete(id.customRoles)
        .where(and(eq(id.customRoles.accountId, accountId), eq(id.customRoles.id, roleId)))
        .returning({ id: id.customRoles.id });
      if (r.length !== 1) return false;
      await insertAudit(tx, a);
      return true;
    });
  }

  async listGroups(accountId: string): Promise<Group[]> {
    return this.groupsWhere(eq(id.groups.accountId, accountId));
  }

  private async groupsWhere(where: SQL | undefined): Promise<Group[]> {
    const rows = await this.db.select().from(id.groups).where(where).orderBy(asc(id.groups.name));
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const [members, claims] = await Promise.all([
      this.db.select().from(id.groupMembers).where(inArray(id.groupMembers.groupId, ids)),
      this.db.select().from(id.groupMachines).where(inArray(id.groupMachines.groupId, ids)),
    ]);
    return groupsFromRows(rows, members, claims);
  }

  async getGroup(accountId: string, groupId: string): Promise<Group | null> {
    const [g] = await this.groupsWhere(and(eq(id.groups.accountId, accountId), eq(id.groups.id, groupId)));
    return g ?? null;
  }

  async saveGroup(g: Group, a: AuditEventInput) {
    await this.database.transaction(async (tx) => {
      // The upsert comes first: it locks the group row to commit, so concurrent saves of one group replace its
      // members one after the other instead of interleaving into primary-key conflicts.
      await tx
        .insert(id.groups)
        .values({ id: g.id, accountId: g.accountId, name: g.name, createdAt: g.createdAt })
        .onConflictDoUpdate({ target: id.groups.id, set: { name: g.name } });
      await tx.delete(id.groupMembers).where(eq(id.groupMembers.groupId, g.id));
      await tx.delete(id.groupMachines).where(eq(id.groupMachines.groupId, g.id));
      const memberIds = [...new Set(g.memberIds)];
      const machineIds = [...new Set(g.machineIds)];
      if (memberIds.length > 0) {
        await tx.insert(id.groupMembers).values(memberIds.map((userId) => ({ groupId: g.id, userId })));
      }
      if (machineIds.length > 0) {
        await tx.insert(id.groupMachines).values(machineIds.map((machineId) => ({ groupId: g.id, machineId })));
      }
      await insertAudit(tx, a);
    });
  }

  async deleteGroup(accountId: string, groupId: string, a: AuditEventInput): Promise<boolean> {
    return this.database.transaction(async (tx) => {
      // The group row goes first: the account check and the lock on the group in one statement; its members and
      // claims follow it (ON DELETE CASCADE would too, but SQLite's twin deletes them explicitly).
      const r = await tx
        .delete(id.groups)
        .where(and(eq(id.groups.accountId, accountId), eq(id.groups.id, groupId)))
        .returning({ id: id.groups.id });
      if (r.length !== 1) return false;
      await tx.delete(id.groupMembers).where(eq(id.groupMembers.groupId, groupId));
      await tx.delete(id.groupMachines).where(eq(id.groupMachines.groupId, groupId));
      await insertAudit(tx, a);
      return true;
    });
  }

  async machineClaims(accountId: string): Promise<Map<string, string[]>> {
    const rows = await this.db
      .select({ groupId: id.groupMachines.groupId, machineId: id.groupMachines.machineId })
      .from(id.groupMachines)
      .innerJoin(id.groups, eq(id.groups.id, id.groupMachines.groupId))
      .where(eq(id.groups.accountId, accountId));
    return claimsByMachine(rows);
  }

  async groupsOfUser(accountId: string, userId: string): Promise<string[]> {
    const rows = await this.db
      .select({ id: id.groups.id })
      .from(id.groupMembers)
      .innerJoin(id.groups, eq(id.groups.id, id.groupMembers.groupId))
      .where(and(eq(id.groups.accountId, accountId), eq(id.groupMembers.userId, userId)));
    return rows.map((r) => r.id);
  }

  async listApiTokens(accountId: string, userId: string | null) {
    const where =
      userId === null
        ? eq(core.apiTokens.accountId, accountId)
        : and(eq(core.apiTokens.accountId, accountId), eq(core.apiTokens.userId, userId));
    const rows = await this.db.select().from(core.apiTokens).where(where).orderBy(asc(core.apiTokens.createdAt));
    return rows.map(listedApiTokenFromRow);
  }

  async revokeApiToken(accountId: string, tokenId: string, at: string, a: AuditEventInput): Promise<boolean> {
    return this.database.transaction(async (tx) => {
      const r = await tx
        .update(core.apiTokens)
        .set({ revokedAt: at })
        .where(
          and(
            eq(core.apiTokens.id, tokenId),
            eq(core.apiTokens.accountId, accountId),
            isNull(core.apiTokens.revokedAt),
          ),
        )
        .returning({ id: core.apiTokens.id });
      if (r.length !== 1) return false;
      await insertAudit(tx, a);
      return true;
    });
  }
}
