import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LetKiteError } from '@letkite/protocol';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type pg from 'pg';

const drizzleRoot = import.meta.letkiteBundle
  ? fileURLToPath(new URL('./drizzle', import.meta.url)) // built: copied next to the bundle (tools/build)
  : join(dirname(fileURLToPath(import.meta.url)), '../../../drizzle');

/**
 * The PostgreSQL domains in the order their migrations apply (a domain's tables may reference an earlier
 * domain's: identity references core `accounts` and `users`). Each has its folder `apps/gateway/drizzle/<folder>`
 * (drizzle-kit config `apps/gateway/drizzle.<folder>.config.ts`) and its own migrations table, as on SQLite.
 */
export const PG_DOMAINS: readonly { folder: string; table: string }[] = [
  { folder: 'pg', table: '__drizzle_migrations' },
  { folder: 'pg-redaction', table: '__drizzle_migrations_redaction' },
  { folder: 'pg-identity', table: '__drizzle_migrations_identity' },
  { folder: 'pg-oauth', table: '__drizzle_migrations_oauth' },
  { folder: 'pg-approvals', table: '__drizzle_migrations_approvals' },
  { folder: 'pg-policies', table: '__drizzle_migrations_policies' },
  { folder: 'pg-mcp-sessions', table: '__drizzle_migrations_mcp_sessions' },
  { folder: 'pg-transfers', table: '__drizzle_migrations_transfers' },
  { folder: 'pg-wake', table: '__drizzle_migrations_wake' },
];

export type PgDb = NodePgDatabase<Record<string, never>>;
/** A drizzle transaction handle: pass it to `insertAudit` and to every statement of the change. */
export type PgTx = Parameters<Parameters<PgDb['transaction']>[0]>[0];

/** SQLSTATEs after which a whole transaction may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected

/** Migrations of every process serialize on this advisory lock (two gateways starting on one database). */
const MIGRATION_LOCK = 0x4c4b4d47; // "LKMG"

/** A URL without its password, for messages (a database URL may carry one; it never reaches a log). */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * The cluster store's database: one connection pool shared by every domain store, so a domain's change and its
 * audit row run in one transaction. `open` applies every domain's migrations before anything reads.
 */
export class PgDatabase {
  private constructor(
    readonly pool: pg.Pool,
    readonly db: PgDb,
  ) {}

  static async open(url: string, options: { maxConnections?: number } = {}): Promise<PgDatabase> {
    // The driver loads here, not with the module: a gateway on SQLite never pays for it (≈ 12 MiB, bench/memory).
    const [{ default: pgDriver }, { drizzle }] = await Promise.all([import('pg'), import('drizzle-orm/node-postgres')]);
    const pool = new pgDriver.Pool({ connectionString: url, max: options.maxConnections ?? 10 });
    // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    const database = new PgDatabase(pool, drizzle(pool));
    try {
      await pool.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => {});
      throw new LetKiteError(
        'internal',
        `cannot reach the PostgreSQL database at ${redactDatabaseUrl(url)}: ${(err as Error).message}`,
      );
    }
    try {
      await database.migrate();
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
    return database;
  }

  /**
   * Applies every domain's pending migrations in one transaction under an advisory lock, so concurrent starts
   * apply each migration once. The bookkeeping matches drizzle's migrator (table, hash, created_at = folderMillis).
   */
  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      for (const domain of PG_DOMAINS) {
        const migrations = readMigrationFiles({ migrationsFolder: join(drizzleRoot, domain.folder) });
        const table = `"${domain.table.replace(/"/g, '""')}"`;
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${table} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
        );
        const last = await client.query<{ created_at: string }>(
          `SELECT created_at FROM ${table} ORDER BY created_at DESC LIMIT 1`,
        );
        const lastAt = last.rows[0] ? Number(last.rows[0].created_at) : null;
        for (const m of migrations) {
          if (lastAt !== null && lastAt >= m.folderMillis) continue;
          for (const stmt of m.sql) if (stmt.trim() !== '') await client.query(stmt);
          await client.query(`INSERT INTO ${table} (hash, created_at) VALUES ($1, $2)`, [m.hash, m.folderMillis]);
        }
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Runs `fn` in one transaction (READ COMMITTED unless asked otherwise) and commits, or rolls back on a throw.
   * A serialization failure or deadlock re-runs the whole of `fn` a few times: `fn` must not have side effects
   * outside the transaction.
   */
  async transaction<T>(
    fn: (tx: PgTx) => Promise<T>,
    options: { isolationLevel?: 'read committed' | 'repeatable read' | 'serializable' } = {},
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction(fn, { isolationLevel: options.isolationLevel ?? 'read committed' });
      } catch (err) {
        const code = sqlStateOf(err);
        if (attempt >= 5 || code === null || !RETRYABLE.has(code)) throw err;
        await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
      }
    }
  }

  /** True when the database answers (readiness). */
  async ping(): Promise<boolean> {
    try {
      await this.db.execute(sql`SELECT 1`);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** The SQLSTATE of a pg error (drizzle wraps it in `cause`), or null. */
export function sqlStateOf(err: unknown): string | null {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 4; i++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
    e = e.cause as typeof e;
  }
  return null;
}

/** True for a unique-constraint violation (23505), e.g. an insert racing another for the same key. */
export function isUniqueViolation(err: unknown): boolean {
  return sqlStateOf(err) === '23505';
}
