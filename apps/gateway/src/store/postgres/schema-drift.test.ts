import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import {
  generateDrizzleJson,
  generateMigration,
  generateSQLiteDrizzleJson,
  generateSQLiteMigration,
} from 'drizzle-kit/api';
import { is, SQL } from 'drizzle-orm';
import { PgTable, getTableConfig as pgTableConfig } from 'drizzle-orm/pg-core';
import { SQLiteTable, getTableConfig as sqliteTableConfig } from 'drizzle-orm/sqlite-core';
import { describe, expect, test } from 'vitest';

/**
 * The two dialects hold one data model: every SQLite schema module (store/sqlite/*schema.ts) has a PostgreSQL twin
 * (store/postgres/, same file name) with the same tables, columns (name, NOT NULL, default, primary key), indexes
 * (name, unique, columns, partial or not) and foreign keys. And each dialect's migrations produce its schema:
 * the latest drizzle-kit snapshot of every domain equals what `drizzle-kit generate` would compute from the schema
 * file now, so a schema change without its generated migration fails here.
 */

const storeDir = resolve(import.meta.dirname, '..');
const gatewayDir = resolve(storeDir, '../../');

/** A dialect-free description of one table, for comparison. */
interface TableShape {
  columns: Record<string, { notNull: boolean; hasDefault: boolean; primary: boolean }>;
  primaryKey: string[];
  indexes: Record<string, { unique: boolean; columns: string[]; partial: boolean }>;
  foreignKeys: string[];
}

const columnName = (c: unknown): string =>
  is(c, SQL) ? '<expression>' : String((c as { name?: string }).name ?? '<expression>');

function shapeOf(config: ReturnType<typeof sqliteTableConfig> | ReturnType<typeof pgTableConfig>): TableShape {
  const columns: TableShape['columns'] = {};
  for (const c of config.columns) {
    // drizzle marks every SQLite INTEGER PRIMARY KEY as defaulted (the rowid); no store relies on it (the
    // singletons insert id 1, audit ids are drawn by insertAudit on both dialects), so only a declared default counts.
    const rowid = c.columnType === 'SQLiteInteger' && c.primary && c.default === undefined;
    columns[c.name] = { notNull: c.notNull, hasDefault: rowid ? false : c.hasDefault, primary: c.primary };
  }
  const primaryKey = [
    ...config.columns.filter((c) => c.primary).map((c) => c.name),
    ...config.primaryKeys.flatMap((pk) => pk.columns.map((c) => c.name)),
  ].sort();
  const indexes: TableShape['indexes'] = {};
  for (const i of config.indexes) {
    const ic = i.config as { name: string; unique: boolean; columns: unknown[]; where?: unknown };
    indexes[ic.name] = { unique: ic.unique, columns: ic.columns.map(columnName), partial: ic.where !== undefined };
  }
  const foreignKeys = config.foreignKeys
    .map((fk) => {
      const r = fk.reference();
      const foreign = 'getSQL' in r.foreignTable ? getName(r.foreignTable) : '?';
      return `${r.columns.map((c) => c.name).join(',')} -> ${foreign}(${r.foreignColumns.map((c) => c.name).join(',')})`;
    })
    .sort();
  return { columns, primaryKey, indexes, foreignKeys };
}

function getName(table: unknown): string {
  return is(table, PgTable) ? pgTableConfig(table).name : sqliteTableConfig(table as SQLiteTable).name;
}

function tablesOf(mod: Record<string, unknown>, dialect: 'sqlite' | 'pg'): Map<string, TableShape> {
  const out = new Map<string, TableShape>();
  for (const value of Object.values(mod)) {
    if (dialect === 'sqlite' && is(value, SQLiteTable)) {
      const c = sqliteTableConfig(value);
      out.set(c.name, shapeOf(c));
    }
    if (dialect === 'pg' && is(value, PgTable)) {
      const c = pgTableConfig(value);
      out.set(c.name, shapeOf(c));
    }
  }
  return out;
}

const sqliteModules = readdirSync(join(storeDir, 'sqlite'))
  .filter((f) => /(^|-)schema\.ts$/.test(f))
  .sort();

describe('every SQLite schema has a PostgreSQL twin with the same shape', () => {
  test('there are schema modules to compare', () => {
    expect(sqliteModules).toContain('schema.ts');
    expect(sqliteModules.length).toBeGreaterThan(5);
  });

  test.each(sqliteModules)('%s', async (file) => {
    const twin = join(storeDir, 'postgres', file);
    expect(existsSync(twin), `store/postgres/${file} (the PostgreSQL twin of store/sqlite/${file}) is missing`).toBe(
      true,
    );
    const sqlite = tablesOf(await import(join(storeDir, 'sqlite', file)), 'sqlite');
    const pg = tablesOf(await import(twin), 'pg');
    expect([...pg.keys()].sort(), `tables of ${file}`).toEqual([...sqlite.keys()].sort());
    for (const [name, shape] of sqlite) expect(pg.get(name), `table ${name} (${file})`).toEqual(shape);
  });
});

/** Every drizzle-kit config of the gateway: its dialect, schema file and migrations folder. */
const configs = readdirSync(gatewayDir)
  .filter((f) => /^drizzle\.([a-z-]+\.)?config\.ts$/.test(f))
  .sort();

describe("each domain's migrations produce its schema (no change drizzle-kit would still generate)", () => {
  test('there are configs for both dialects', () => {
    expect(configs).toContain('drizzle.config.ts');
    expect(configs).toContain('drizzle.pg.config.ts');
  });

  test.each(configs)('%s', async (file) => {
    const config = (await import(join(gatewayDir, file))).default as { dialect: string; schema: string; out: string };
    const root = resolve(gatewayDir, '../..');
    const schema = (await import(resolve(root, config.schema))) as Record<string, unknown>;
    const meta = resolve(root, config.out, 'meta');
    const journal = JSON.parse(readFileSync(join(meta, '_journal.json'), 'utf8')) as {
      entries: { idx: number; tag: string }[];
    };
    const last = journal.entries.at(-1);
    expect(last, `${config.out} has no migration`).toBeDefined();
    const snapshotFile = join(meta, `${String(last?.idx).padStart(4, '0')}_snapshot.json`);
    expect(existsSync(snapshotFile), `${basename(snapshotFile)} of ${config.out}`).toBe(true);
    const snapshot = JSON.parse(readFileSync(snapshotFile, 'utf8'));
    const pending =
      config.dialect === 'postgresql'
        ? await generateMigration(snapshot, generateDrizzleJson(schema))
        : await generateSQLiteMigration(snapshot, await generateSQLiteDrizzleJson(schema));
    expect(
      pending,
      `${config.schema} changed without a migration: npx drizzle-kit generate --config apps/gateway/${file} --name <what>`,
    ).toEqual([]);
  });
});
