import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Tests only: a fresh PostgreSQL database on the machine's server (LETKITE_TEST_PG_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres, trust auth), dropped again by `drop()`. Each test file (or case)
 * gets its own, so suites run in parallel without sharing state.
 */
export async function createTestDatabase(prefix = 'letkite_test'): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.LETKITE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
