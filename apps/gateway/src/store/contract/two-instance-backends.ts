import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgDatabase } from '../postgres/pg-database';
import { createTestDatabase } from '../postgres/test-database';
import { SqliteStore } from '../sqlite/sqlite-store';

/**
 * Tests only: one domain store twice on one database, as two gateways have it — SQLite on a temp file, or
 * PostgreSQL on a fresh test database (two pools). `exec`/`rows` run raw SQL (`?` placeholders on both) to seed
 * rows of other domains and to read what a change wrote, without depending on those domains' stores.
 */
export interface TwoInstances<S> {
  a: S;
  b: S;
  exec(query: string, params?: unknown[]): Promise<void>;
  rows<T>(query: string, params?: unknown[]): Promise<T[]>;
}

export interface Backend<S> {
  name: 'sqlite' | 'postgres';
  /** Once per describe: PostgreSQL creates its database and opens both pools here. */
  start(): Promise<void>;
  /** Before each case: an empty domain (SQLite: a new file; PostgreSQL: `truncate` emptied). */
  open(): Promise<TwoInstances<S>>;
  /** After each case. */
  close(): Promise<void>;
  /** After the describe: closes the pools and drops the database. */
  stop(): Promise<void>;
}

/** Both backends of a domain store; `truncate` names the tables a PostgreSQL case starts without rows in. */
export function twoInstanceBackends<S>(make: {
  sqlite(core: SqliteStore): S;
  postgres(database: PgDatabase): S;
  truncate: string[];
}): Backend<S>[] {
  let dir = '';
  let cores: SqliteStore[] = [];
  const sqlite: Backend<S> = {
    name: 'sqlite',
    async start() {},
    async open() {
      dir = mkdtempSync(join(tmpdir(), 'lk-contract-'));
      cores = [0, 1].map(() => new SqliteStore(join(dir, 'letkite.db')));
      const [c0, c1] = cores as [SqliteStore, SqliteStore];
      const a = make.sqlite(c0);
      const b = make.sqlite(c1);
      return {
        a,
        b,
        async exec(query, params = []) {
          c0.sqlite.prepare(query).run(...params);
        },
        async rows<T>(query: string, params: unknown[] = []) {
          return c0.sqlite.prepare(query).all(...params) as T[];
        },
      };
    },
    async close() {
      for (const c of cores) await c.close();
      cores = [];
      rmSync(dir, { recursive: true, force: true });
    },
    async stop() {},
  };

  let pgDrop: (() => Promise<void>) | null = null;
  let databases: PgDatabase[] = [];
  const numbered = (query: string) => {
    let n = 0;
    return query.replace(/\?/g, () => `$${++n}`);
  };
  const postgres: Backend<S> = {
    name: 'postgres',
    async start() {
      const test = await createTestDatabase();
      pgDrop = test.drop;
      // Opened at once: the two migrations meet at the advisory lock, as two gateways starting together do.
      databases = await Promise.all([PgDatabase.open(test.url), PgDatabase.open(test.url)]);
    },
    async open() {
      const [d0, d1] = databases as [PgDatabase, PgDatabase];
      if (make.truncate.length > 0) await d0.pool.query(`TRUNCATE ${make.truncate.join(', ')} CASCADE`);
      return {
        a: make.postgres(d0),
        b: make.postgres(d1),
        async exec(query, params = []) {
          await d0.pool.query(numbered(query), params);
        },
        async rows<T>(query: string, params: unknown[] = []) {
          return (await d0.pool.query(numbered(query), params)).rows as T[];
        },
      };
    },
    async close() {},
    async stop() {
      for (const d of databases) await d.close();
      databases = [];
      await pgDrop?.();
    },
  };
  return [sqlite, postgres];
}
