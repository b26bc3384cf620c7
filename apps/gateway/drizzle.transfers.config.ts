import { defineConfig } from 'drizzle-kit';

// The transfers domain's migrations (docs/design/store-domains.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.transfers.config.ts --name <what>`.
export default defineConfig({
  dialect: 'sqlite',
  schema: './apps/gateway/src/store/sqlite/transfers-schema.ts',
  out: './apps/gateway/drizzle/sqlite-transfers',
});
