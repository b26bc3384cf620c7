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
import { insertAudit } from './pg-audit';
import type { PgDatabase, PgDb, PgTx } from './pg-database';
import { accountSettings, policies, policyVersions } from './policies-schema';

/**
 * The policies domain on PostgreSQL (cluster mode; migrations `pg-policies`, after `pg-oauth` whose connections
 * the in-use check reads). The same decisions as SqlitePolicyStore, each made by a write on READ COMMITTED: the
 * primary key admits one create, the conditional increment numbers concurrent updates, the policy row written
 * first orders a delete against the others.
 */
export class PgPolicyStore implements PolicyStore {
  private readonly db: PgDb;
  private readonly hot;

  constructor(private readonly database: PgDatabase) {
    this.db = database.db;
    const p = sql.placeholder;
    // Both run on every tool call (policy resolution, the account switches): prepared once per connection.
    this.hot = {
      policy: this.db
        .select()
        .from(policies)
        .where(and(eq(policies.accountId, p('accountId')), eq(policies.name, p('name'))))
        .prepare('policy_get'),
      settings: this.db
        .select()
        .from(accountSettings)
        .where(eq(accountSettings.accountId, p('accountId')))
        .prepare('account_settings_get'),
    };
  }

  async list(accountId: string): Promise<StoredPolicy[]> {
    const rows = await this.db.select().from(policies).where(eq(policies.accountId, accountId)).orderBy(policies.name);
    return rows.map(storedFromRow);
  }

  async get(accountId: string, name: string): Promise<StoredPolicy | null> {
    const [r] = await this.hot.policy.execute({ accountId, name });
    return r ? storedFromRow(r) : null;
  }

  async versions(accountId: string, name: string): Promise<PolicyRevision[]> {
    const rows = await this.db
      .select()
      .from(policyVersions)
      .where(and(eq(policyVersions.accountId, accountId), eq(policyVersions.name, name)))
      .orderBy(desc(policyVersions.version));
    return rows.map(revisionFromRow);
  }

  async version(accountId: string, name: string, version: number): Promise<PolicyRevision | null> {
    const [r] = await this.db
      .select()
      .from(policyVersions)
      .where(
        and(
          eq(policyVersions.accountId, accountId),
          eq(policyVersions.name, name),
          eq(policyVersions.version, version),
        ),
      );
    return r ? revisionFromRow(r) : null;
  }

  async create(accountId: string, rev: Omit<PolicyRevision, 'version'>, audit: AuditEventInput): Promise<boolean> {
    return this.database.transaction(async (tx) => {
      // The decision is the insert: of two creates of one name, the primary key admits one (the second waits for
      // the first to commit, then does nothing).
      const won = await tx
        .insert(policies)
        .values(newPolicyRow(accountId, rev))
        .onConflictDoNothing()
        .returning({ name: policies.name });
      if (won.length !== 1) return false;
      // A policy deleted and created again starts over at 1: its old revisions went with it.
      await tx.insert(policyVersions).values(revisionToRow(accountId, rev, 1));
      await insertAudit(tx, { ...audit, details: { ...audit.details, version: 1 } });
      return true;
    });
  }

  async update(
    accountId: string,
    rev: Omit<PolicyRevision, 'version'>,
    expectedVersion: number | undefined,
    audit: AuditEventInput,
  ): Promise<number | null> {
    return this.database.transaction(async (tx) => {
      const parsed = JSON.stringify(rev.parsed);
      // The decision is this conditional increment: the row lock orders concurrent updates and PostgreSQL
      // re-checks the WHERE on the row the first one committed, so they get two different numbers, and with
      // `expectedVersion` the second one matches nothing.
      const [bumped] = await tx
        .update(policies)
        .set({
          version: sql`${policies.version} + 1`,
          source: rev.source,
          parsed,
          updatedAt: rev.at,
          updatedBy: rev.author,
        })
        .where(
          and(
            eq(policies.accountId, accountId),
            eq(policies.name, rev.name),
            expectedVersion === undefined ? undefined : eq(policies.version, expectedVersion),
          ),
        )
        .returning({ version: policies.version });
      if (!bumped) return null;
      await tx.insert(policyVersions).values(revisionToRow(accountId, rev, bumped.version));
      await insertAudit(tx, { ...audit, details: { ...audit.details, version: bumped.version } });
      return bumped.version;
    });
  }

  async delete(accountId: string, name: string, audit: AuditEventInput): Promise<PolicyUse[] | null> {
    return this.database.transaction(async (tx) => {
      // The policy row is written first (a lock, like `setMemberRole`): a concurrent update or delete waits for
      // this transaction. The check below is the next statement, so on READ COMMITTED it sees every token or
      // connection committed before it; one granted later names a deleted policy and its resolution fails closed
      // ("unknown policy").
      const locked = await tx
        .update(policies)
        .set({ version: sql`${policies.version}` })
        .where(and(eq(policies.accountId, accountId), eq(policies.name, name)))
        .returning({ name: policies.name });
      if (locked.length !== 1) return null;
      const uses = await this.usesIn(tx, accountId, name, audit.at);
      if (uses.length > 0) return uses;
      await tx
        .delete(policyVersions)
        .where(and(eq(policyVersions.accountId, accountId), eq(policyVersions.name, name)));
      await tx.delete(policies).where(and(eq(policies.accountId, accountId), eq(policies.name, name)));
      await insertAudit(tx, audit);
      return [];
    });
  }

  async usesOf(accountId: string, name: string, now: string): Promise<PolicyUse[]> {
    return this.usesIn(this.db, accountId, name, now);
  }

  /**
   * Grants store a stored policy by name (`"policy": "<name>"`); inline policy objects and built-in names never
   * match a stored name (stored names may not be built-in ones). Revoked connections and revoked or expired
   * tokens do not count: they can never call again. Grants are JSON text (as on SQLite), read as jsonb here.
   */
  private async usesIn(db: PgDb | PgTx, accountId: string, name: string, now: string): Promise<PolicyUse[]> {
    const result = await db.execute<PolicyUseRow>(sql`
      SELECT 'api_token' AS kind, t.id AS id, t.name AS label, t.user_id, u.name AS user_name
        FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE t.account_id = ${accountId} AND t.revoked_at IS NULL
         AND (t.expires_at IS NULL OR t.expires_at > ${now})
         AND jsonb_typeof(t."grant"::jsonb -> 'policy') = 'string' AND t."grant"::jsonb ->> 'policy' = ${name}
      UNION ALL
      SELECT 'connection' AS kind, c.id AS id, c.client_name AS label, c.user_id, u.name AS user_name
        FROM oauth_connections c JOIN users u ON u.id = c.user_id
       WHERE c.account_id = ${accountId} AND c.revoked_at IS NULL
         AND jsonb_typeof(c."grant"::jsonb -> 'policy') = 'string' AND c."grant"::jsonb ->> 'policy' = ${name}
       ORDER BY 1, 2`);
    return result.rows.map(useFromRow);
  }

  async settings(accountId: string): Promise<AccountSettings> {
    const [r] = await this.hot.settings.execute({ accountId });
    return settingsFromRow(r);
  }

  async saveSettings(
    accountId: string,
    s: Omit<AccountSettings, 'updatedAt' | 'updatedBy'>,
    audit: AuditEventInput,
  ): Promise<AccountSettings> {
    const row = settingsToRow(accountId, s, audit);
    // An upsert: two first saves of one account meet at the primary key, the second updates the first's row.
    await this.database.transaction(async (tx) => {
      await tx.insert(accountSettings).values(row).onConflictDoUpdate({ target: accountSettings.accountId, set: row });
      await insertAudit(tx, audit);
    });
    return this.settings(accountId);
  }
}
