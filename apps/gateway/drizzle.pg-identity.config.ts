import { defineConfig } from 'drizzle-kit';

// PostgreSQL identity domain (cluster mode; docs/design/store-domains.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.pg-identity.config.ts --name <what>` after a change to src/store/postgres/identity-schema.ts,
// together with the same change to its SQLite twin (schema-drift.test.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './apps/gateway/src/store/postgres/identity-schema.ts',
  out: './apps/gateway/drizzle/pg-identity',
});
