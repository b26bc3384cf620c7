import { defineConfig } from 'drizzle-kit';

// PostgreSQL policies domain (cluster mode; docs/design/store-domains.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.pg-policies.config.ts --name <what>` after a change to src/store/postgres/policies-schema.ts,
// together with the same change to its SQLite twin (schema-drift.test.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './apps/gateway/src/store/postgres/policies-schema.ts',
  out: './apps/gateway/drizzle/pg-policies',
});
