import { defineConfig } from 'drizzle-kit';

// PostgreSQL wake domain (cluster mode; docs/design/store-domains.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.pg-wake.config.ts --name <what>` after a change to src/store/postgres/wake-schema.ts,
// together with the same change to its SQLite twin (schema-drift.test.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './apps/gateway/src/store/postgres/wake-schema.ts',
  out: './apps/gateway/drizzle/pg-wake',
});
