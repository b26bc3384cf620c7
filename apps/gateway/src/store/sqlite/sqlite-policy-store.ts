import { and, desc, eq, sql } from 'drizzle-orm';
import {
  type AccountSettings,
  newPolicyRow,
  type PolicyRevision,
  type PolicyStore,
  type PolicyUse,
  type PolicyUseRow,
  revisionFromRow,
  revisionToRow,
  type StoredPolicy,
  settingsFromRow,
  settingsToRow,
  storedFromRow,
  useFromRow,
} from '../policy-store';
import type { AuditEventInput } from '../types';
import { insertAudit, sqliteClientOf } from './audit';
import { accountSettings, policies, policyVersions } from './policies-schema';
import { migrateSqliteDomain, type SqliteStore } from './sqlite-store';

/** The policies domain on the shared SQLite database (its own migrations, `__drizzle_migrations_policies`). */
export class SqlitePolicyStore implements PolicyStore {
  private readonly db: SqliteStore['db'];
  private readonly hot;

  constructor(store: SqliteStore) {
    this.db = store.db;
    // The in-use check reads the OAuth domain's connections: make sure its tables exist even when this store is
    // opened first (the admin CLI); applying a domain's migrations twice is a no-op.
    migrateSqliteDomain(store.db, 'sqlite-oauth', '__drizzle_migrations_oauth');
    migrateSqliteDomain(store.db, 'sqlite-policies', '__drizzle_migrations_policies');
    const p = sql.placeholder;
    // Both run on every tool call (policy resolution, the account switches): prepared once.
    this.hot = {
      policy: this.db
        .select()
        .from(policies)
        .where(and(eq(policies.accountId, p('accountId')), eq(policies.name, p('name'))))
        .prepare(),
      settings: this.db
        .select()
        .from(accountSettings)
        .where(eq(accountSettings.accountId, p('accountId')))
        .prepare(),
    };
  }

  async list(accountId: string): Promise<StoredPolicy[]> {
    return this.db
      .select()
      .from(policies)
      .where(eq(policies.accountId, accountId))
      .orderBy(policies.name)
      .all()
      .map(storedFromRow);
  }

  async get(accountId: string, name: string): Promise<StoredPolicy | null> {
    const r = this.hot.policy.get({ accountId, name });
    return r ? storedFromRow(r) : null;
  }

  async versions(accountId: string, name: string): Promise<PolicyRevision[]> {
    return this.db
      .select()
      .from(policyVersions)
      .where(and(eq(policyVersions.accountId, accountId), eq(policyVersions.name, name)))
      .orderBy(desc(policyVersions.version))
      .all()
      .map(revisionFromRow);
  }

  async version(accountId: string, name: string, version: number): Promise<PolicyRevision | null> {
    const r = this.db
      .select()
      .from(policyVersions)
      .where(
        and(
          eq(policyVersions.accountId, accountId),
          eq(policyVersions.name, name),
          eq(policyVersions.version, version),
        ),
      )
      .get();
    return r ? revisionFromRow(r) : null;
  }

  async create(accountId: string, rev: Omit<PolicyRevision, 'version'>, audit: AuditEventInput): Promise<boolean> {
    return this.db.transaction((tx) => {
      // The decision is the insert: of two creates of one name, the primary key admits one.
      const won = tx.insert(policies).values(newPolicyRow(accountId, rev)).onConflictDoNothing().run();
      if (won.changes !== 1) return false;
      // A policy deleted and created again starts over at 1: its old revisions went with it.
      tx.insert(policyVersions)
        .values(revisionToRow(accountId, rev, 1))
        .run();
      insertAudit(sqliteClientOf(tx), { ...audit, details: { ...audit.details, version: 1 } });
      return true;
    });
  }

  async update(
    accountId: string,
    rev: Omit<PolicyRevision, 'version'>,
    expectedVersion: number | undefined,
    audit: AuditEventInput,
  ): Promise<number | null> {
    return this.db.transaction((tx) => {
      const parsed = JSON.stringify(rev.parsed);
      // The decision is this conditional increment: two concurrent updates get two different numbers (the row
      // lock orders them), and with `expectedVersion` the second one matches nothing.
      const where = and(
        eq(policies.accountId, accountId),
        eq(policies.name, rev.name),
        expectedVersion === undefined ? undefined : eq(policies.version, expectedVersion),
      );
      const bumped = tx
        .update(policies)
        .set({
          version: sql`${policies.version} + 1`,
          source: rev.source,
          parsed,
          updatedAt: rev.at,
          updatedBy: rev.author,
        })
        .where(where)
        .returning({ version: policies.version })
        .get();
      if (!bumped) return null;
      tx.insert(policyVersions)
        .values(revisionToRow(accountId, rev, bumped.version))
        .run();
      insertAudit(sqliteClientOf(tx), { ...audit, details: { ...audit.details, version: bumped.version } });
      return bumped.version;
    });
  }

  async delete(accountId: string, name: string, audit: AuditEventInput): Promise<PolicyUse[] | null> {
    return this.db.transaction((tx) => {
      // The policy row is written first (as a lock, like `setMemberRole`): a token or connection granted this
      // policy concurrently commits either before this (and is seen by the check) or after the delete (and its
      // resolution then fails closed: "unknown policy").
      const locked = tx
        .update(policies)
        .set({ version: sql`${policies.version}` })
        .where(and(eq(policies.accountId, accountId), eq(policies.name, name)))
        .run();
      if (locked.changes !== 1) return null;
      const uses = this.usesIn(tx, accountId, name, audit.at);
      if (uses.length > 0) return uses;
      tx.delete(policyVersions)
        .where(and(eq(policyVersions.accountId, accountId), eq(policyVersions.name, name)))
        .run();
      tx.delete(policies)
        .where(and(eq(policies.accountId, accountId), eq(policies.name, name)))
        .run();
      insertAudit(sqliteClientOf(tx), audit);
      return [];
    });
  }

  async usesOf(accountId: string, name: string, now: string): Promise<PolicyUse[]> {
    return this.usesIn(this.db, accountId, name, now);
  }

  /**
   * Grants store a stored policy by name (`"policy": "<name>"`); inline policy objects and built-in names never
   * match a stored name (stored names may not be built-in ones). Revoked connections and revoked or expired
   * tokens do not count: they can never call again.
   */
  private usesIn(db: Pick<SqliteStore['db'], 'all'>, accountId: string, name: string, now: string): PolicyUse[] {
    const rows = db.all<PolicyUseRow>(sql`
      SELECT 'api_token' AS kind, t.id AS id, t.name AS label, t.user_id, u.name AS user_name
        FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE t.account_id = ${accountId} AND t.revoked_at IS NULL
         AND (t.expires_at IS NULL OR t.expires_at > ${now})
         AND json_type(t."grant", '$.policy') = 'text' AND json_extract(t."grant", '$.policy') = ${name}
      UNION ALL
      SELECT 'connection' AS kind, c.id AS id, c.client_name AS label, c.user_id, u.name AS user_name
        FROM oauth_connections c JOIN users u ON u.id = c.user_id
       WHERE c.account_id = ${accountId} AND c.revoked_at IS NULL
         AND json_type(c."grant", '$.policy') = 'text' AND json_extract(c."grant", '$.policy') = ${name}
       ORDER BY 1, 2`);
    return rows.map(useFromRow);
  }

  async settings(accountId: string): Promise<AccountSettings> {
    const r = this.hot.settings.get({ accountId });
    return settingsFromRow(r);
  }

  async saveSettings(
    accountId: string,
    s: Omit<AccountSettings, 'updatedAt' | 'updatedBy'>,
    audit: AuditEventInput,
  ): Promise<AccountSettings> {
    const row = settingsToRow(accountId, s, audit);
    this.db.transaction((tx) => {
      tx.insert(accountSettings).values(row).onConflictDoUpdate({ target: accountSettings.accountId, set: row }).run();
      insertAudit(sqliteClientOf(tx), audit);
    });
    return this.settings(accountId);
  }
}
