import { randomBytes } from 'node:crypto';
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import { apiTokenFromRow } from '../identity-rows';
import { checkPageLimit, pageOf, pageStart } from '../machine-page';
import type {
  Account,
  AgentSeen,
  ApiToken,
  AuditEvent,
  AuditEventInput,
  AuditQuery,
  AuditVerification,
  JoinToken,
  Machine,
  MachinePage,
  MachineReach,
  Role,
  Store,
  User,
} from '../types';
import { insertAudit } from './pg-audit';
import { PgAuditBatch } from './pg-audit-batch';
import {
  auditRetention,
  claimTakeover,
  listAuditRows,
  pruneAuditRows,
  setAuditRetentionDays,
  verifyAuditChain,
} from './pg-audit-log';
import { PgDatabase, type PgDb, type PgTx } from './pg-database';
import { redactionPatterns } from './redaction-schema';
import * as schema from './schema';

type MachineRow = typeof schema.machines.$inferSelect;

/** A machine row under the drizzle names, so `machineFromRow` maps plain-SQL reads too. */
const MACHINE_COLUMNS = `m.id, m.account_id AS "accountId", m.name, m.public_key AS "publicKey", m.hostname, m.os,
  m.os_release AS "osRelease", m.arch, m.agent_version AS "agentVersion", m.labels, m.ceiling,
  m.ceiling_source AS "ceilingSource", m.ceiling_error AS "ceilingError", m.enrolled_at AS "enrolledAt",
  m.last_seen_at AS "lastSeenAt", m.revoked_at AS "revokedAt"`;

/**
 * The reach filter of SqliteStore in this dialect: $1 account, $2 user, $3 sees claimed machines. A machine claimed
 * by groups of its account is reached by their members only (owners and admins aside). The group tables are the
 * identity domain's, in the same database.
 */
const LIVE_BY_GROUPS = `m.account_id = $1 AND m.revoked_at IS NULL
  AND ($3::boolean
    OR NOT EXISTS (SELECT 1 FROM group_machines gm JOIN groups g ON g.id = gm.group_id
                   WHERE gm.machine_id = m.id AND g.account_id = m.account_id)
    OR EXISTS (SELECT 1 FROM group_machines gm JOIN groups g ON g.id = gm.group_id
               JOIN group_members gu ON gu.group_id = gm.group_id
               WHERE gm.machine_id = m.id AND g.account_id = m.account_id AND gu.user_id = $2))`;

/**
 * A page: after ($4, $5) in (name as bytes, id) order, at most $6 rows (null: all), one range of
 * machines_live_page. A grant's machine list ($7) drives its own query by id instead of filtering the fleet.
 */
const pageQuery = (listed: boolean) => `SELECT ${MACHINE_COLUMNS} FROM machines m
  WHERE ${LIVE_BY_GROUPS} ${listed ? 'AND m.id = ANY($7::text[])' : ''}
    AND (m.name COLLATE "C", m.id) > ($4::text COLLATE "C", $5::text)
  ORDER BY m.name COLLATE "C", m.id LIMIT $6`;

/** Resolving a reference: the machine with id $4, or those named $4. */
const BY_REF_QUERY = `SELECT ${MACHINE_COLUMNS} FROM machines m
  WHERE ${LIVE_BY_GROUPS} AND (m.id = $4 OR m.name = $4)
  ORDER BY m.name COLLATE "C", m.id`;

function machineFromRow(r: MachineRow): Machine {
  return {
    id: r.id,
    accountId: r.accountId,
    name: r.name,
    publicKey: r.publicKey,
    hostname: r.hostname,
    os: r.os,
    osRelease: r.osRelease,
    arch: r.arch,
    agentVersion: r.agentVersion,
    labels: JSON.parse(r.labels) as string[],
    ceiling: r.ceiling === null ? null : (JSON.parse(r.ceiling) as unknown),
    ceilingSource: r.ceilingSource,
    ceilingError: r.ceilingError,
    enrolledAt: r.enrolledAt,
    lastSeenAt: r.lastSeenAt,
  };
}

/** Machine names sort as bytes, as on SQLite (a linguistic collation would put `B` after `a`). */
const byNameBytes = sql`${schema.machines.name} COLLATE "C"`;

/**
 * The core store on PostgreSQL (cluster mode), the twin of SqliteStore. Domain stores (identity, oauth,
 * approvals, …) share its `database`, so a domain's change and its audit row run in one transaction.
 *
 * SQLite has one writer, so its "read, decide, write" transactions cannot interleave; here (READ COMMITTED, any
 * number of gateways) each decision is a conditional write whose row count decides, an ON CONFLICT on the same
 * unique index, or a read under a row lock taken first: machine names lock the account row (FOR NO KEY UPDATE,
 * which the foreign-key checks of other inserts do not wait for), the audit chain locks its `audit_chains` row.
 */
export class PgStore implements Store {
  private readonly hot: ReturnType<PgStore['prepareHotQueries']>;

  /** Standalone audit rows, committed a batch at a time (pg-audit-batch.ts). */
  private readonly auditBatch: PgAuditBatch;

  constructor(readonly database: PgDatabase) {
    this.hot = this.prepareHotQueries();
    this.auditBatch = new PgAuditBatch(database);
  }

  static async open(url: string): Promise<PgStore> {
    return new PgStore(await PgDatabase.open(url));
  }

  private get db(): PgDb {
    return this.database.db;
  }

  /**
   * The queries every MCP call runs (bearer lookup, role, machine list, redaction patterns) as named prepared
   * statements: each pool connection parses and plans them once.
   */
  private prepareHotQueries() {
    const p = sql.placeholder;
    return {
      roleOf: this.db
        .select({ role: schema.memberships.role })
        .from(schema.memberships)
        .where(and(eq(schema.memberships.accountId, p('accountId')), eq(schema.memberships.userId, p('userId'))))
        .prepare('core_role_of'),
      apiTokenByHash: this.db
        .select()
        .from(schema.apiTokens)
        .where(eq(schema.apiTokens.tokenHash, p('hash')))
        .prepare('core_api_token_by_hash'),
      machines: this.db
        .select()
        .from(schema.machines)
        .where(and(eq(schema.machines.accountId, p('accountId')), isNull(schema.machines.revokedAt)))
        .orderBy(byNameBytes)
        .prepare('core_machines'),
      redactionPatterns: this.db
        .select({ patterns: redactionPatterns.patterns })
        .from(redactionPatterns)
        .where(eq(redactionPatterns.accountId, p('accountId')))
        .prepare('core_redaction_patterns'),
    };
  }

  async bootstrap(now: string): Promise<{ account: Account; owner: User }> {
    const [done] = await this.db.select().from(schema.gatewayBootstrap).where(eq(schema.gatewayBootstrap.id, 1));
    if (done) return this.bootstrappedIn(this.db);
    return this.database.transaction(async (tx) => {
      const account: Account = { id: `acc_${randomBytes(9).toString('hex')}`, name: 'default', createdAt: now };
      // The decision is this insert: of two first starts at once, the second's insert waits for the first's
      // commit on the primary key and then does nothing; it reads the winner's account (a fresh snapshot per
      // statement under READ COMMITTED).
      const won = await tx
        .insert(schema.gatewayBootstrap)
        .values({ id: 1, accountId: account.id, createdAt: now })
        .onConflictDoNothing()
        .returning({ id: schema.gatewayBootstrap.id });
      if (won.length !== 1) return this.bootstrappedIn(tx);
      const owner: User = { id: `usr_${randomBytes(9).toString('hex')}`, name: 'owner', email: null, createdAt: now };
      await tx.insert(schema.accounts).values(account);
      await tx.insert(schema.users).values(owner);
      await tx
        .insert(schema.memberships)
        .values({ accountId: account.id, userId: owner.id, role: 'owner', createdAt: now });
      await insertAudit(tx, {
        accountId: account.id,
        at: now,
        actor: 'system',
        action: 'account.bootstrap',
        target: account.id,
      });
      return { account, owner };
    });
  }

  /** The bootstrapped account and its first owner. */
  private async bootstrappedIn(db: PgDb | PgTx): Promise<{ account: Account; owner: User }> {
    const [b] = await db.select().from(schema.gatewayBootstrap).where(eq(schema.gatewayBootstrap.id, 1));
    const [account] = b ? await db.select().from(schema.accounts).where(eq(schema.accounts.id, b.accountId)) : [];
    if (!account) throw new Error('the bootstrapped account is missing');
    const [m] = await db
      .select()
      .from(schema.memberships)
      .where(and(eq(schema.memberships.accountId, account.id), eq(schema.memberships.role, 'owner')))
      .orderBy(asc(schema.memberships.createdAt))
      .limit(1);
    const [owner] = m ? await db.select().from(schema.users).where(eq(schema.users.id, m.userId)) : [];
    if (!owner) throw new Error(`account ${account.id} has no owner`);
    return { account, owner };
  }

  async getUser(id: string): Promise<User | null> {
    const [u] = await this.db.select().from(schema.users).where(eq(schema.users.id, id));
    return u ?? null;
  }

  async roleOf(accountId: string, userId: string): Promise<Role | null> {
    const [m] = await this.hot.roleOf.execute({ accountId, userId });
    return (m?.role as Role | undefined) ?? null;
  }

  async createApiToken(token: ApiToken & { tokenHash: string }, audit: AuditEventInput): Promise<void> {
    await this.database.transaction(async (tx) => {
      await tx.insert(schema.apiTokens).values({
        id: token.id,
        accountId: token.accountId,
        userId: token.userId,
        name: token.name,
        tokenHash: token.tokenHash,
        grant: JSON.stringify(token.grant),
        createdAt: token.createdAt,
        expiresAt: token.expiresAt,
        revokedAt: token.revokedAt,
      });
      await insertAudit(tx, audit);
    });
  }

  async findApiTokenByHash(tokenHash: string): Promise<ApiToken | null> {
    const [r] = await this.hot.apiTokenByHash.execute({ hash: tokenHash });
    return r ? apiTokenFromRow(r) : null;
  }

  async touchApiToken(id: string, at: string): Promise<void> {
    await this.db.update(schema.apiTokens).set({ lastUsedAt: at }).where(eq(schema.apiTokens.id, id));
  }

  async createJoinToken(token: JoinToken & { tokenHash: string }, audit: AuditEventInput): Promise<void> {
    await this.database.transaction(async (tx) => {
      await tx.insert(schema.joinTokens).values(token);
      await insertAudit(tx, audit);
    });
  }

  async findJoinTokenByHash(tokenHash: string): Promise<JoinToken | null> {
    const [r] = await this.db.select().from(schema.joinTokens).where(eq(schema.joinTokens.tokenHash, tokenHash));
    if (!r) return null;
    const { tokenHash: _hash, ...rest } = r;
    return rest;
  }

  /**
   * Locks the account row for the rest of the transaction: every change that decides on the account's machine
   * names (enroll, rename) takes it first, so one sees the other's committed name. FOR NO KEY UPDATE does not
   * block the FOR KEY SHARE of foreign-key checks (inserting tokens, memberships) on the same account.
   */
  private async lockMachineNames(tx: PgTx, accountId: string): Promise<void> {
    await tx.execute(sql`SELECT 1 FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`);
  }

  private async liveMachineNames(tx: PgTx, accountId: string): Promise<{ id: string; name: string }[]> {
    return tx
      .select({ id: schema.machines.id, name: schema.machines.name })
      .from(schema.machines)
      .where(and(eq(schema.machines.accountId, accountId), isNull(schema.machines.revokedAt)));
  }

  async enrollMachine(
    joinTokenId: string,
    machine: Machine,
    audit: AuditEventInput,
    onNameTaken: 'suffix' | 'refuse',
  ): Promise<{ ok: true; name: string } | { ok: false; reason: 'token_used' | 'name_taken' }> {
    return this.database.transaction(async (tx) => {
      await this.lockMachineNames(tx, machine.accountId);
      const taken = new Set((await this.liveMachineNames(tx, machine.accountId)).map((r) => r.name.toLowerCase()));
      let name = machine.name;
      if (taken.has(name.toLowerCase())) {
        if (onNameTaken === 'refuse') return { ok: false as const, reason: 'name_taken' as const };
        name = freeName(machine.name, taken);
      }
      // The token's decision is this conditional update: a racing enrollment with the same token (through any
      // gateway) waits for the row and then finds used_at set, so it changes nothing.
      const used = await tx
        .update(schema.joinTokens)
        .set({ usedAt: machine.enrolledAt, machineId: machine.id })
        .where(and(eq(schema.joinTokens.id, joinTokenId), isNull(schema.joinTokens.usedAt)))
        .returning({ id: schema.joinTokens.id });
      if (used.length !== 1) return { ok: false as const, reason: 'token_used' as const };
      await tx.insert(schema.machines).values({
        ...machine,
        name,
        labels: JSON.stringify(machine.labels),
        ceiling: machine.ceiling === null ? null : JSON.stringify(machine.ceiling),
      });
      await insertAudit(tx, { ...audit, details: { ...audit.details, name } });
      return { ok: true as const, name };
    });
  }

  async renameMachine(
    accountId: string,
    machineId: string,
    name: string,
    audit: AuditEventInput,
  ): Promise<{ ok: true; previousName: string } | { ok: false; reason: 'not_found' | 'name_taken' }> {
    return this.database.transaction(async (tx) => {
      await this.lockMachineNames(tx, accountId);
      const live = await this.liveMachineNames(tx, accountId);
      const machine = live.find((m) => m.id === machineId);
      if (!machine) return { ok: false as const, reason: 'not_found' as const };
      if (live.some((m) => m.id !== machineId && m.name.toLowerCase() === name.toLowerCase()))
        return { ok: false as const, reason: 'name_taken' as const };
      await tx.update(schema.machines).set({ name }).where(eq(schema.machines.id, machineId));
      await insertAudit(tx, { ...audit, details: { ...audit.details, name, previous_name: machine.name } });
      return { ok: true as const, previousName: machine.name };
    });
  }

  async getMachine(id: string): Promise<Machine | null> {
    const [r] = await this.db
      .select()
      .from(schema.machines)
      .where(and(eq(schema.machines.id, id), isNull(schema.machines.revokedAt)));
    return r ? machineFromRow(r) : null;
  }

  async listMachines(accountId: string): Promise<Machine[]> {
    return (await this.hot.machines.execute({ accountId })).map(machineFromRow);
  }

  /** The reach queries as named prepared statements: each pool connection parses and plans them once. */
  private async reachRows(
    reach: MachineReach,
    after: { name: string; id: string },
    limit: number | null,
  ): Promise<MachineRow[]> {
    const values: unknown[] = [reach.accountId, reach.userId, reach.seesClaimedMachines, after.name, after.id, limit];
    const listed = reach.machineIds !== '*';
    if (listed) values.push(reach.machineIds);
    const r = await this.database.pool.query<MachineRow>({
      name: listed ? 'core_reach_page_listed' : 'core_reach_page_all',
      text: pageQuery(listed),
      values,
    });
    return r.rows;
  }

  async pageReachableMachines(
    reach: MachineReach,
    page: { cursor: string | null; limit: number },
  ): Promise<MachinePage> {
    checkPageLimit(page.limit);
    const rows = await this.reachRows(reach, pageStart(page.cursor), page.limit + 1);
    return pageOf(rows.map(machineFromRow), page.limit);
  }

  async listReachableMachines(reach: MachineReach): Promise<Machine[]> {
    return (await this.reachRows(reach, pageStart(null), null)).map(machineFromRow);
  }

  async findReachableMachines(reach: MachineReach, ref: string): Promise<Machine[]> {
    const r = await this.database.pool.query<MachineRow>({
      name: 'core_reach_by_ref',
      text: BY_REF_QUERY,
      values: [reach.accountId, reach.userId, reach.seesClaimedMachines, ref],
    });
    const allowed = reach.machineIds;
    // The grant's list is a handful of ids next to at most a few rows here: checked on them, not in SQL.
    return (allowed === '*' ? r.rows : r.rows.filter((m) => allowed.includes(m.id))).map(machineFromRow);
  }

  async recordAgentSeen(machineId: string, seen: AgentSeen): Promise<void> {
    await this.db
      .update(schema.machines)
      .set({
        hostname: seen.hostname,
        os: seen.os,
        osRelease: seen.osRelease,
        arch: seen.arch,
        agentVersion: seen.agentVersion,
        lastSeenAt: seen.at,
      })
      .where(eq(schema.machines.id, machineId));
  }

  async recordCeiling(
    machineId: string,
    report: { ceiling: unknown; source: string; error: string | null },
    audit: AuditEventInput | null,
  ): Promise<void> {
    await this.database.transaction(async (tx) => {
      await tx
        .update(schema.machines)
        .set({
          ceiling: report.ceiling === null ? null : JSON.stringify(report.ceiling),
          ceilingSource: report.source,
          ceilingError: report.error,
        })
        .where(eq(schema.machines.id, machineId));
      if (audit) await insertAudit(tx, audit);
    });
  }

  async getRedactionPatterns(accountId: string): Promise<string[]> {
    const [row] = await this.hot.redactionPatterns.execute({ accountId });
    return row === undefined ? [] : (JSON.parse(row.patterns) as string[]);
  }

  async setRedactionPatterns(accountId: string, patterns: string[], audit: AuditEventInput): Promise<void> {
    await this.database.transaction(async (tx) => {
      const row = { accountId, patterns: JSON.stringify(patterns), updatedAt: audit.at, updatedBy: audit.actor };
      await tx
        .insert(redactionPatterns)
        .values(row)
        .onConflictDoUpdate({ target: redactionPatterns.accountId, set: row });
      await insertAudit(tx, audit);
    });
  }

  appendAudit(event: AuditEventInput): Promise<number> {
    return this.auditBatch.append(event);
  }

  listAudit(accountId: string, query: AuditQuery): Promise<AuditEvent[]> {
    return listAuditRows(this.db, accountId, query);
  }

  verifyAudit(accountId: string): Promise<AuditVerification> {
    return verifyAuditChain(this.database, accountId);
  }

  pruneAudit(accountId: string, before: string, audit: AuditEventInput): Promise<{ pruned: number }> {
    return pruneAuditRows(this.database, accountId, before, audit);
  }

  getAuditRetention(accountId: string): Promise<number | null> {
    return auditRetention(this.db, accountId);
  }

  setAuditRetention(accountId: string, days: number | null, audit: AuditEventInput): Promise<void> {
    return setAuditRetentionDays(this.database, accountId, days, audit);
  }

  claimTakeoverNotice(notice: Parameters<Store['claimTakeoverNotice']>[0], audit: AuditEventInput): Promise<boolean> {
    return claimTakeover(this.database, notice, audit);
  }

  async close(): Promise<void> {
    await this.auditBatch.flush();
    await this.database.close();
  }
}

/** `vm` → `vm-2` (or `vm-3`, …): the first that is not taken, cut so the suffix fits in 63 characters. */
function freeName(base: string, taken: ReadonlySet<string>): string {
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, 63 - suffix.length)}${suffix}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}
