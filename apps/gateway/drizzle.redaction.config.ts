import { defineConfig } from 'drizzle-kit';

// The account redaction patterns' migrations (docs/design/store-domains.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.redaction.config.ts --name <what>`.
export default defineConfig({
  dialect: 'sqlite',
  schema: './apps/gateway/src/store/sqlite/redaction-schema.ts',
  out: './apps/gateway/drizzle/sqlite-redaction',
});
