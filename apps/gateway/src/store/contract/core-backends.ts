import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PgDatabase } from '../postgres/pg-database';
import { PgStore } from '../postgres/pg-store';
import { createTestDatabase } from '../postgres/test-database';
import { SqliteStore } from '../sqlite/sqlite-store';
import type { Store } from '../types';

/**
 * Tests only: the core Store twice on one database, as two gateways have it — SQLite on a temp file, PostgreSQL on
 * a test database (two pools) — plus the database's location, so other processes (`openStore(location)`) can
 * write to it too. `exec`/`rows` run raw SQL (`?` placeholders on both) to tamper with rows as an attacker with
 * database access would, or to read what a change wrote.
 */
export interface CoreInstances {
  name: 'sqlite' | 'postgres';
  location: string;
  a: Store;
  b: Store;
  exec(query: string, params?: unknown[]): Promise<void>;
  rows<T>(query: string, params?: unknown[]): Promise<T[]>;
}

export interface CoreBackend {
  name: 'sqlite' | 'postgres';
  /** Once per describe: PostgreSQL creates its database and opens both pools here. */
  start(): Promise<void>;
  /** Before each case: an empty database (SQLite: a new file; PostgreSQL: every core table emptied, ids from 1). */
  open(): Promise<CoreInstances>;
  /** After each case. */
  close(): Promise<void>;
  /** After the describe: closes the pools and drops the database. */
  stop(): Promise<void>;
  /** A database nothing has opened yet (not even migrations), for races of first starts; `drop` removes it. */
  fresh(): Promise<{ location: string; drop(): Promise<void> }>;
}

/** The core tables (and the redaction domain's), emptied between PostgreSQL cases. */
const CORE_TABLES = [
  'gateway_bootstrap',
  'memberships',
  'api_tokens',
  'join_tokens',
  'machines',
  'audit_events',
  'audit_chains',
  'takeover_notices',
  'redaction_patterns',
  'users',
  'accounts',
];

export function coreBackends(): CoreBackend[] {
  let dir = '';
  let stores: SqliteStore[] = [];
  const freshDirs: string[] = [];
  const sqlite: CoreBackend = {
    name: 'sqlite',
    async start() {},
    async open() {
      dir = mkdtempSync(join(tmpdir(), 'lk-core-contract-'));
      const location = join(dir, 'letkite.db');
      stores = [0, 1].map(() => new SqliteStore(location));
      const [a, b] = stores as [SqliteStore, SqliteStore];
      return {
        name: 'sqlite',
        location,
        a,
        b,
        async exec(query, params = []) {
          a.sqlite.prepare(query).run(...params);
        },
        async rows<T>(query: string, params: unknown[] = []) {
          return a.sqlite.prepare(query).all(...params) as T[];
        },
      };
    },
    async close() {
      for (const s of stores) await s.close();
      stores = [];
      rmSync(dir, { recursive: true, force: true });
    },
    async stop() {
      for (const d of freshDirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
    async fresh() {
      const d = mkdtempSync(join(tmpdir(), 'lk-core-fresh-'));
      freshDirs.push(d);
      return { location: join(d, 'letkite.db'), drop: async () => rmSync(d, { recursive: true, force: true }) };
    },
  };

  let url = '';
  let drop: (() => Promise<void>) | null = null;
  let databases: PgDatabase[] = [];
  const numbered = (query: string) => {
    let n = 0;
    return query.replace(/\?/g, () => `$${++n}`);
  };
  const postgres: CoreBackend = {
    name: 'postgres',
    async start() {
      const test = await createTestDatabase();
      url = test.url;
      drop = test.drop;
      databases = await Promise.all([PgDatabase.open(url), PgDatabase.open(url)]);
    },
    async open() {
      const [d0, d1] = databases as [PgDatabase, PgDatabase];
      await d0.pool.query(`TRUNCATE ${CORE_TABLES.join(', ')} CASCADE`);
      // Cases name rows by id as on a new database; the sequence is not owned by a column, so TRUNCATE keeps it.
      await d0.pool.query('ALTER SEQUENCE audit_events_id_seq RESTART');
      return {
        name: 'postgres',
        location: url,
        a: new PgStore(d0),
        b: new PgStore(d1),
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
      await drop?.();
    },
    async fresh() {
      const test = await createTestDatabase();
      return { location: test.url, drop: test.drop };
    },
  };
  return [sqlite, postgres];
}

const openStorePath = resolve(import.meta.dirname, '../open-store.ts');

/**
 * Runs `body` in a separate Node process with `store` opened on `location` through `openStore` (what a second
 * gateway or `letkite admin` does). `startAt` (epoch ms) makes several such processes begin at the same moment.
 * Resolves with the exit code and everything the process printed.
 */
export function storeProcess(
  location: string,
  body: string,
  args: string[] = [],
  startAt?: number,
): Promise<{ code: number | null; out: string }> {
  const script = `
    const { openStore } = await import(${JSON.stringify(openStorePath)});
    const args = process.argv.slice(1);
    ${startAt === undefined ? '' : `while (Date.now() < ${startAt}) {}`}
    const store = await openStore(${JSON.stringify(location)});
    try { ${body} } finally { await store.close(); }
  `;
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('exit', (code) => done({ code, out }));
  });
}
