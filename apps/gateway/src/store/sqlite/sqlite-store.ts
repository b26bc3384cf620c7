import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { and, eq, isNull } from 'drizzle-orm';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { readMigrationFiles } from 'drizzle-orm/migrator';
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
import { insertAudit, sqliteClientOf } from './audit';
import { AuditBatch } from './audit-batch';
import { redactionPatterns } from './redaction-schema';
import * as schema from './schema';
import {
  auditRetention,
  claimTakeover,
  listAuditRows,
  pruneAuditRows,
  sealUnchainedRows,
  setAuditRetentionDays,
  verifyAuditChain,
} from './sqlite-audit-log';

const drizzleRoot = import.meta.letkiteBundle
  ? fileURLToPath(new URL('./drizzle', import.meta.url)) // built: copied next to the bundle (tools/build)
  : join(dirname(fileURLToPath(import.meta.url)), '../../../drizzle');

type Db = BetterSQLite3Database<typeof schema>;

type MachineRow = typeof schema.machines.$inferSelect;

/** A machine row under the drizzle names, so `machineFromRow` maps plain-SQL reads too. */
const MACHINE_COLUMNS = `m.id, m.account_id AS accountId, m.name, m.public_key AS publicKey, m.hostname, m.os,
  m.os_release AS osRelease, m.arch, m.agent_version AS agentVersion, m.labels, m.ceiling,
  m.ceiling_source AS ceilingSource, m.ceiling_error AS ceilingError, m.enrolled_at AS enrolledAt,
  m.last_seen_at AS lastSeenAt, m.revoked_at AS revokedAt`;

/**
 * Group claims over `machines m` (named parameters): a machine claimed by groups of its account is reached by their
 * members only, unless `@seesClaimed` (owners and admins). The group tables are the identity domain's, in the same
 * file.
 */
const BY_GROUPS = `(@seesClaimed = 1
    OR NOT EXISTS (SELECT 1 FROM group_machines gm JOIN groups g ON g.id = gm.group_id
                   WHERE gm.machine_id = m.id AND g.account_id = m.account_id)
    OR EXISTS (SELECT 1 FROM group_machines gm JOIN groups g ON g.id = gm.group_id
               JOIN group_members gu ON gu.group_id = gm.group_id
               WHERE gm.machine_id = m.id AND g.account_id = m.account_id AND gu.user_id = @userId))`;

const LIVE = `m.account_id = @accountId AND m.revoked_at IS NULL`;

/**
 * A grant's machine list (`@machineIds`, a JSON array) drives its own query by id (CROSS JOIN keeps that order):
 * filtering the account's whole range by it would read the fleet for a grant of three machines.
 */
const LISTED = `(SELECT DISTINCT value AS id FROM json_each(@machineIds)) AS listed CROSS JOIN machines m ON m.id = listed.id`;

function reachParams(reach: MachineReach) {
  return {
    accountId: reach.accountId,
    userId: reach.userId,
    seesClaimed: reach.seesClaimedMachines ? 1 : 0,
  };
}

/**
 * Applies one domain's migrations. Each domain (core, identity, approvals, jobs …) keeps its own schema file,
 * drizzle-kit config, migrations folder (`apps/gateway/drizzle/<folder>`) and migrations table, so domains evolve
 * independently; all share one database file and can join core tables (accounts, users, audit_events).
 *
 * The same bookkeeping as drizzle's migrator (same table, same columns), but the "which are applied" read is inside
 * a `BEGIN IMMEDIATE` with the migrations: drizzle reads before its BEGIN, so two gateways starting at once on one
 * database could both apply a migration and the second would fail on "table already exists".
 */
export function migrateSqliteDomain(
  db: BetterSQLite3Database<Record<string, unknown>>,
  folder: string,
  table: string,
): void {
  const migrations = readMigrationFiles({ migrationsFolder: join(drizzleRoot, folder) });
  // drizzle keeps its better-sqlite3 handle as `$client` (typed only on `drizzle()`'s own result).
  const client = (db as unknown as { $client: Database.Database }).$client;
  const name = `"${table.replace(/"/g, '""')}"`;
  client.exec(`CREATE TABLE IF NOT EXISTS ${name} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
  client
    .transaction(() => {
      const last = client.prepare(`SELECT created_at FROM ${name} ORDER BY created_at DESC LIMIT 1`).get() as
        | { created_at: number | string }
        | undefined;
      for (const m of migrations) {
        if (last && Number(last.created_at) >= m.folderMillis) continue;
        for (const stmt of m.sql) if (stmt.trim() !== '') client.exec(stmt);
        client.prepare(`INSERT INTO ${name} ("hash", "created_at") VALUES (?, ?)`).run(m.hash, m.folderMillis);
      }
    })
    .immediate();
}

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

/**
 * The database holds token hashes, sealed TOTP seeds, the audit log: its directory is 0700 and the file 0600
 * before SQLite opens it, so the -wal and -shm files SQLite creates next to it get 0600 too (SQLite copies the
 * database's mode). An existing directory is tightened only when it is ours and not a shared sticky one (/tmp).
 */
function makePrivate(file: string): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const d = statSync(dir);
  if (d.uid === process.getuid?.() && (d.mode & 0o1000) === 0 && (d.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  closeSync(openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      chmodSync(f, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** The embedded store: one SQLite file (WAL), migrations applied on open. */
/**
 * Switches the file to WAL. The switch needs an exclusive lock, and SQLite answers SQLITE_BUSY at once (no busy
 * handler) when another process opens the same fresh file at the same moment — two gateways, or a gateway and
 * `letkite admin …`, started together. Retry for a bounded time; any other error, or a lock held longer, throws.
 */
function enableWal(sqlite: Database.Database, deadlineMs = 10_000): void {
  const until = Date.now() + deadlineMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= until) throw err;
      Atomics.wait(pause, 0, 0, 20 + Math.floor(Math.random() * 30));
    }
  }
}

export class SqliteStore implements Store {
  /** The raw handle and the drizzle handle, for the domain stores that share this database. */
  readonly sqlite: Database.Database;
  readonly db: Db;

  constructor(file: string) {
    if (file !== ':memory:') makePrivate(file);
    this.sqlite = new Database(file);
    enableWal(this.sqlite);
    // In WAL mode NORMAL never corrupts the database; a power cut may lose the last commits, which is the right
    // trade for an audit append on every tool call (FULL costs an fsync each).
    this.sqlite.pragma('synchronous = NORMAL');
    this.sqlite.pragma('foreign_keys = ON');
    // Freed content is overwritten: a replaced seed or a deleted token row leaves no readable copy in the file.
    this.sqlite.pragma('secure_delete = ON');
    // Several processes (gateway, `letkite admin …`) share the file; wait for a lock instead of failing.
    this.sqlite.pragma('busy_timeout = 5000');
    this.db = drizzle(this.sqlite, { schema });
    migrateSqliteDomain(this.db, 'sqlite', '__drizzle_migrations');
    migrateSqliteDomain(this.db, 'sqlite-redaction', '__drizzle_migrations_redaction');
    sealUnchainedRows(this.sqlite);
    this.hot = this.prepareHotQueries();
    this.auditBatch = new AuditBatch(this.sqlite);
  }

  /** Standalone audit rows, committed a batch per event-loop turn (audit-batch.ts). */
  private readonly auditBatch: AuditBatch;

  /**
   * The queries every MCP call runs (bearer lookup, role, machine list, audit append), prepared once: building and
   * compiling them per call was a measurable part of a tool call's latency.
   */
  private readonly hot: ReturnType<SqliteStore['prepareHotQueries']>;

  private prepareHotQueries() {
    // Plain SQL with the row's own aliases, not drizzle's prepared queries: drizzle's per-call mapping was a
    // visible part of a light tool call's gateway CPU (bench/throughput profile), and at thousands of machines its
    // per-row mapping cost about as much as the query itself.
    return {
      roleOf: this.sqlite.prepare<[string, string], { role: string }>(
        'SELECT role FROM memberships WHERE account_id = ? AND user_id = ?',
      ),
      apiTokenByHash: this.sqlite.prepare<[string], typeof schema.apiTokens.$inferSelect>(
        `SELECT id, account_id AS accountId, user_id AS userId, name, token_hash AS tokenHash, "grant",
                created_at AS createdAt, expires_at AS expiresAt, revoked_at AS revokedAt, last_used_at AS lastUsedAt
         FROM api_tokens WHERE token_hash = ?`,
      ),
      machines: this.sqlite.prepare<[string], MachineRow>(
        `SELECT ${MACHINE_COLUMNS} FROM machines m WHERE m.account_id = ? AND m.revoked_at IS NULL ORDER BY m.name`,
      ),
      // Every tool call reads the account's redaction patterns (output masking).
      redactionPatterns: this.sqlite.prepare<[string], { patterns: string }>(
        'SELECT patterns FROM redaction_patterns WHERE account_id = ?',
      ),
    };
  }

  async bootstrap(now: string): Promise<{ account: Account; owner: User }> {
    // A read outside the transaction: a later write in the same transaction would fail on a stale snapshot.
    if (this.db.select().from(schema.gatewayBootstrap).where(eq(schema.gatewayBootstrap.id, 1)).get()) {
      return this.bootstrapped();
    }
    return this.db.transaction((tx) => {
      const account: Account = { id: `acc_${randomBytes(9).toString('hex')}`, name: 'default', createdAt: now };
      // The decision is this insert: of two first starts at once, one inserts row 1 and creates the account;
      // the other's insert does nothing and it reads the winner's account.
      const won = tx
        .insert(schema.gatewayBootstrap)
        .values({ id: 1, accountId: account.id, createdAt: now })
        .onConflictDoNothing()
        .run();
      if (won.changes !== 1) return this.bootstrappedIn(tx);
      const owner: User = { id: `usr_${randomBytes(9).toString('hex')}`, name: 'owner', email: null, createdAt: now };
      tx.insert(schema.accounts).values(account).run();
      tx.insert(schema.users).values(owner).run();
      tx.insert(schema.memberships)
        .values({ accountId: account.id, userId: owner.id, role: 'owner', createdAt: now })
        .run();
      insertAudit(sqliteClientOf(tx), {
        accountId: account.id,
        at: now,
        actor: 'system',
        action: 'account.bootstrap',
        target: account.id,
      });
      return { account, owner };
    });
  }

  private bootstrapped(): { account: Account; owner: User } {
    return this.bootstrappedIn(this.db);
  }

  /** The bootstrapped account and its first owner. */
  private bootstrappedIn(db: Pick<Db, 'select'>): { account: Account; owner: User } {
    const b = db.select().from(schema.gatewayBootstrap).where(eq(schema.gatewayBootstrap.id, 1)).get();
    const account = b && db.select().from(schema.accounts).where(eq(schema.accounts.id, b.accountId)).get();
    if (!account) throw new Error('the bootstrapped account is missing');
    const m = db
      .select()
      .from(schema.memberships)
      .where(and(eq(schema.memberships.accountId, account.id), eq(schema.memberships.role, 'owner')))
      .orderBy(schema.memberships.createdAt)
      .limit(1)
      .get();
    const owner = m && db.select().from(schema.users).where(eq(schema.users.id, m.userId)).get();
    if (!owner) throw new Error(`account ${account.id} has no owner`);
    return { account, owner };
  }

  async getUser(id: string): Promise<User | null> {
    return this.db.select().from(schema.users).where(eq(schema.users.id, id)).get() ?? null;
  }

  async roleOf(accountId: string, userId: string): Promise<Role | null> {
    const m = this.hot.roleOf.get(accountId, userId);
    return (m?.role as Role | undefined) ?? null;
  }

  async createApiToken(token: ApiToken & { tokenHash: string }, audit: AuditEventInput): Promise<void> {
    this.db.transaction((tx) => {
      tx.insert(schema.apiTokens)
        .values({
          id: token.id,
          accountId: token.accountId,
          userId: token.userId,
          name: token.name,
          tokenHash: token.tokenHash,
          grant: JSON.stringify(token.grant),
          createdAt: token.createdAt,
          expiresAt: token.expiresAt,
          revokedAt: token.revokedAt,
        })
        .run();
      insertAudit(sqliteClientOf(tx), audit);
    });
  }

  async findApiTokenByHash(tokenHash: string): Promise<ApiToken | null> {
    const r = this.hot.apiTokenByHash.get(tokenHash);
    return r ? apiTokenFromRow(r) : null;
  }

  async touchApiToken(id: string, at: string): Promise<void> {
    this.db.update(schema.apiTokens).set({ lastUsedAt: at }).where(eq(schema.apiTokens.id, id)).run();
  }

  async createJoinToken(token: JoinToken & { tokenHash: string }, audit: AuditEventInput): Promise<void> {
    this.db.transaction((tx) => {
      tx.insert(schema.joinTokens).values(token).run();
      insertAudit(sqliteClientOf(tx), audit);
    });
  }

  async findJoinTokenByHash(tokenHash: string): Promise<JoinToken | null> {
    const r = this.db.select().from(schema.joinTokens).where(eq(schema.joinTokens.tokenHash, tokenHash)).get();
    if (!r) return null;
    const { tokenHash: _hash, ...rest } = r;
    return rest;
  }

  async enrollMachine(
    joinTokenId: string,
    machine: Machine,
    audit: AuditEventInput,
    onNameTaken: 'suffix' | 'refuse',
  ): Promise<{ ok: true; name: string } | { ok: false; reason: 'token_used' | 'name_taken' }> {
    // IMMEDIATE: the name check and the insert hold the write lock together, also against another gateway process.
    return this.db.transaction(
      (tx) => {
        const taken = new Set(
          tx
            .select({ name: schema.machines.name })
            .from(schema.machines)
            .where(and(eq(schema.machines.accountId, machine.accountId), isNull(schema.machines.revokedAt)))
            .all()
            .map((r) => r.name.toLowerCase()),
        );
        let name = machine.name;
        if (taken.has(name.toLowerCase())) {
          if (onNameTaken === 'refuse') return { ok: false as const, reason: 'name_taken' as const };
          name = freeName(machine.name, taken);
        }
        const used = tx
          .update(schema.joinTokens)
          .set({ usedAt: machine.enrolledAt, machineId: machine.id })
          .where(and(eq(schema.joinTokens.id, joinTokenId), isNull(schema.joinTokens.usedAt)))
          .run();
        if (used.changes !== 1) return { ok: false as const, reason: 'token_used' as const };
        tx.insert(schema.machines)
          .values({
            ...machine,
            name,
            labels: JSON.stringify(machine.labels),
            ceiling: machine.ceiling === null ? null : JSON.stringify(machine.ceiling),
          })
          .run();
        insertAudit(sqliteClientOf(tx), { ...audit, details: { ...audit.details, name } });
        return { ok: true as const, name };
      },
      { behavior: 'immediate' },
    );
  }

  async renameMachine(
    accountId: string,
    machineId: string,
    name: string,
    audit: AuditEventInput,
  ): Promise<{ ok: true; previousName: string } | { ok: false; reason: 'not_found' | 'name_taken' }> {
    return this.db.transaction(
      (tx) => {
        const live = tx
          .select({ id: schema.machines.id, name: schema.machines.name })
          .from(schema.machines)
          .where(and(eq(schema.machines.accountId, accountId), isNull(schema.machines.revokedAt)))
          .all();
        const machine = live.find((m) => m.id === machineId);
        if (!machine) return { ok: false as const, reason: 'not_found' as const };
        if (live.some((m) => m.id !== machineId && m.name.toLowerCase() === name.toLowerCase()))
          return { ok: false as const, reason: 'name_taken' as const };
        tx.update(schema.machines).set({ name }).where(eq(schema.machines.id, machineId)).run();
        insertAudit(sqliteClientOf(tx), {
          ...audit,
          details: { ...audit.details, name, previous_name: machine.name },
        });
        return { ok: true as const, previousName: machine.name };
      },
      { behavior: 'immediate' },
    );
  }

  async getMachine(id: string): Promise<Machine | null> {
    const r = this.db
      .select()
      .from(schema.machines)
      .where(and(eq(schema.machines.id, id), isNull(schema.machines.revokedAt)))
      .get();
    return r ? machineFromRow(r) : null;
  }

  async listMachines(accountId: string): Promise<Machine[]> {
    return this.hot.machines.all(accountId).map(machineFromRow);
  }

  /**
   * The reach queries, prepared on first use: they read the identity domain's group tables, which exist once
   * the identity store has migrated this file (the gateway opens it with the core store).
   */
  private reachQueries?: ReturnType<SqliteStore['prepareReachQueries']>;

  private prepareReachQueries() {
    const page = (from: string) =>
      this.sqlite.prepare<[Record<string, unknown>], MachineRow>(
        `SELECT ${MACHINE_COLUMNS} FROM ${from}
         WHERE ${LIVE} AND ${BY_GROUPS} AND (m.name, m.id) > (@afterName, @afterId)
         ORDER BY m.name, m.id LIMIT CAST(@limit AS INTEGER)`,
      );
    return {
      // (name, id) > (…) and the order are one range of machines_live_page (account_id, name, id), so a page
      // reads its own rows. LIMIT -1 is SQLite's "no limit". The CAST: with the bound JS number alone the
      // statement took several times as long as with a literal limit or this (in-process, 1 machine: 26 → 9 µs).
      pageAll: page('machines m'),
      pageListed: page(LISTED),
      byRefAll: this.sqlite.prepare<[Record<string, unknown>], MachineRow>(
        `SELECT ${MACHINE_COLUMNS} FROM machines m WHERE ${LIVE} AND ${BY_GROUPS} AND m.id = @ref
         UNION ALL
         SELECT ${MACHINE_COLUMNS} FROM machines m WHERE ${LIVE} AND ${BY_GROUPS} AND m.name = @ref AND m.id <> @ref
         ORDER BY 3, 1`,
      ),
    };
  }

  private reachRows(reach: MachineReach, after: { name: string; id: string }, limit: number): MachineRow[] {
    this.reachQueries ??= this.prepareReachQueries();
    const params = { ...reachParams(reach), afterName: after.name, afterId: after.id, limit };
    if (reach.machineIds === '*') return this.reachQueries.pageAll.all(params);
    return this.reachQueries.pageListed.all({ ...params, machineIds: JSON.stringify(reach.machineIds) });
  }

  async pageReachableMachines(
    reach: MachineReach,
    page: { cursor: string | null; limit: number },
  ): Promise<MachinePage> {
    checkPageLimit(page.limit);
    const rows = this.reachRows(reach, pageStart(page.cursor), page.limit + 1);
    return pageOf(rows.map(machineFromRow), page.limit);
  }

  async listReachableMachines(reach: MachineReach): Promise<Machine[]> {
    return this.reachRows(reach, pageStart(null), -1).map(machineFromRow);
  }

  async findReachableMachines(reach: MachineReach, ref: string): Promise<Machine[]> {
    this.reachQueries ??= this.prepareReachQueries();
    const rows = this.reachQueries.byRefAll.all({ ...reachParams(reach), ref });
    const allowed = reach.machineIds;
    // The grant's list is a handful of ids next to at most a few rows here: checked on them, not in SQL.
    return (allowed === '*' ? rows : rows.filter((r) => allowed.includes(r.id))).map(machineFromRow);
  }

  async recordAgentSeen(machineId: string, seen: AgentSeen): Promise<void> {
    this.db
      .update(schema.machines)
      .set({
        hostname: seen.hostname,
        os: seen.os,
        osRelease: seen.osRelease,
        arch: seen.arch,
        agentVersion: seen.agentVersion,
        lastSeenAt: seen.at,
      })
      .where(eq(schema.machines.id, machineId))
      .run();
  }

  async recordCeiling(
    machineId: string,
    report: { ceiling: unknown; source: string; error: string | null },
    audit: AuditEventInput | null,
  ): Promise<void> {
    this.db.transaction((tx) => {
      tx.update(schema.machines)
        .set({
          ceiling: report.ceiling === null ? null : JSON.stringify(report.ceiling),
          ceilingSource: report.source,
          ceilingError: report.error,
        })
        .where(eq(schema.machines.id, machineId))
        .run();
      if (audit) insertAudit(sqliteClientOf(tx), audit);
    });
  }

  async getRedactionPatterns(accountId: string): Promise<string[]> {
    const row = this.hot.redactionPatterns.get(accountId);
    return row === undefined ? [] : (JSON.parse(row.patterns) as string[]);
  }

  async setRedactionPatterns(accountId: string, patterns: string[], audit: AuditEventInput): Promise<void> {
    this.db.transaction((tx) => {
      const row = { accountId, patterns: JSON.stringify(patterns), updatedAt: audit.at, updatedBy: audit.actor };
      tx.insert(redactionPatterns)
        .values(row)
        .onConflictDoUpdate({ target: redactionPatterns.accountId, set: row })
        .run();
      insertAudit(sqliteClientOf(tx), audit);
    });
  }

  async appendAudit(event: AuditEventInput): Promise<number> {
    return this.auditBatch.append(event);
  }

  async listAudit(accountId: string, query: AuditQuery): Promise<AuditEvent[]> {
    return listAuditRows(this.sqlite, accountId, query);
  }

  async verifyAudit(accountId: string): Promise<AuditVerification> {
    return verifyAuditChain(this.sqlite, accountId);
  }

  async pruneAudit(accountId: string, before: string, audit: AuditEventInput): Promise<{ pruned: number }> {
    return pruneAuditRows(this.sqlite, accountId, before, audit);
  }

  async getAuditRetention(accountId: string): Promise<number | null> {
    return auditRetention(this.sqlite, accountId);
  }

  async setAuditRetention(accountId: string, days: number | null, audit: AuditEventInput): Promise<void> {
    setAuditRetentionDays(this.sqlite, accountId, days, audit);
  }

  async claimTakeoverNotice(
    notice: Parameters<Store['claimTakeoverNotice']>[0],
    audit: AuditEventInput,
  ): Promise<boolean> {
    return claimTakeover(this.sqlite, notice, audit);
  }

  async close(): Promise<void> {
    this.auditBatch.flush();
    this.sqlite.close();
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
