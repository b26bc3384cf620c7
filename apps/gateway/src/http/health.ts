import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';

/** One thing /readyz checks; it throws (or times out) when the gateway should not get traffic. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void> | void;
}

export interface HealthOptions {
  version: string;
  checks: readonly ReadinessCheck[];
  /** True once shutdown began: /readyz says so, so a load balancer stops sending new work while calls finish. */
  draining?: () => boolean;
  /** A check slower than this counts as failed. */
  timeoutMs?: number;
  /** This gateway's id in the cluster: /readyz names it, so a probe through a proxy tells which one answered. */
  gatewayId?: string;
}

/**
 * GET /healthz (the process is up and answering) and GET /readyz (it can do its work: the store answers, the
 * migrations are applied, it is not shutting down). Neither needs a credential, so neither says more than the
 * name and state of each check: no paths, no error texts, no configuration.
 */
export function healthRoutes(options: HealthOptions): Hono {
  const app = new Hono();
  const timeoutMs = options.timeoutMs ?? 2000;

  app.get('/healthz', (c) =>
    c.json({ status: 'ok', ok: true, version: options.version }, 200, { 'Cache-Control': 'no-store' }),
  );

  app.get('/readyz', async (c) => {
    const checks: Record<string, 'ok' | 'fail'> = {};
    const failed: string[] = [];
    if (options.draining?.()) {
      checks.shutdown = 'fail';
      failed.push('shutdown');
    }
    await Promise.all(
      options.checks.map(async ({ name, check }) => {
        const ok = await withTimeout(Promise.resolve().then(check), timeoutMs).then(
          () => true,
          () => false,
        );
        checks[name] = ok ? 'ok' : 'fail';
        if (!ok) failed.push(name);
      }),
    );
    const headers = { 'Cache-Control': 'no-store' };
    const gateway = options.gatewayId ? { gateway: options.gatewayId } : {};
    if (failed.length > 0) return c.json({ status: 'unavailable', failed, checks, ...gateway }, 503, headers);
    return c.json({ status: 'ready', checks, ...gateway }, 200, headers);
  });

  return app;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timed out')), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** Where the SQLite migrations live (apps/gateway/drizzle/<domain>/, each with meta/_journal.json). */
export const drizzleRoot = import.meta.letkiteBundle
  ? fileURLToPath(new URL('./drizzle', import.meta.url)) // built: copied next to the bundle (tools/build)
  : join(dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/** The `when` stamp of every SQLite migration the code ships (drizzle stores it as `created_at` once applied). */
export function shippedSqliteMigrations(root = drizzleRoot): { domain: string; tag: string; when: number }[] {
  return shippedMigrations(root, /^sqlite(-|$)/);
}

/** The same for PostgreSQL: the journals of apps/gateway/drizzle/pg and pg-<domain>. */
export function shippedPgMigrations(root = drizzleRoot): { domain: string; tag: string; when: number }[] {
  return shippedMigrations(root, /^pg(-|$)/);
}

function shippedMigrations(root: string, folders: RegExp): { domain: string; tag: string; when: number }[] {
  const out: { domain: string; tag: string; when: number }[] = [];
  for (const domain of readdirSync(root)) {
    if (!folders.test(domain)) continue;
    const journal = JSON.parse(readFileSync(join(root, domain, 'meta', '_journal.json'), 'utf8')) as {
      entries: { tag: string; when: number }[];
    };
    for (const e of journal.entries) out.push({ domain, tag: e.tag, when: e.when });
  }
  return out;
}

/** The minimal raw-SQLite surface the migrations check needs (better-sqlite3's Database). */
export interface SqliteHandle {
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
}

/**
 * Every shipped migration is recorded as applied in one of the `__drizzle_migrations*` tables. They are applied on
 * open, so this fails when the database file was swapped or restored from an older copy under a running gateway.
 */
export function sqliteMigrationsCheck(sqlite: SqliteHandle, root = drizzleRoot): ReadinessCheck {
  const shipped = shippedSqliteMigrations(root);
  return {
    name: 'migrations',
    check() {
      const tables = sqlite
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_\\_drizzle\\_migrations%' ESCAPE '\\'",
        )
        .all() as { name: string }[];
      const applied = new Set<number>();
      for (const { name } of tables) {
        if (!/^__drizzle_migrations[a-z_]*$/.test(name)) continue;
        for (const row of sqlite.prepare(`SELECT created_at FROM "${name}"`).all() as { created_at: number }[])
          applied.add(Number(row.created_at));
      }
      const missing = shipped.filter((m) => !applied.has(m.when));
      if (missing.length > 0) throw new Error(`migrations not applied: ${missing.map((m) => m.tag).join(', ')}`);
    },
  };
}

/** The minimal PostgreSQL surface the migrations check needs (a pg Pool). */
export interface PgHandle {
  query(sql: string): Promise<{ rows: unknown[] }>;
}

/**
 * Cluster mode: every shipped PostgreSQL migration (all domains) is recorded as applied. A gateway applies them on
 * start under an advisory lock; this fails when the database was restored from an older dump under a running
 * gateway, or a newer gateway's domain folder is not applied here (a domain missing from PG_DOMAINS).
 */
export function pgMigrationsCheck(pool: PgHandle, root = drizzleRoot): ReadinessCheck {
  const shipped = shippedPgMigrations(root);
  return {
    name: 'migrations',
    async check() {
      const tables = (
        await pool.query(
          "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE '\\_\\_drizzle\\_migrations%'",
        )
      ).rows as { name: string }[];
      const applied = new Set<number>();
      for (const { name } of tables) {
        if (!/^__drizzle_migrations[a-z_]*$/.test(name)) continue;
        const rows = (await pool.query(`SELECT created_at FROM "${name}"`)).rows as { created_at: string }[];
        for (const row of rows) applied.add(Number(row.created_at));
      }
      const missing = shipped.filter((m) => !applied.has(m.when));
      if (missing.length > 0) throw new Error(`migrations not applied: ${missing.map((m) => m.tag).join(', ')}`);
    },
  };
}
