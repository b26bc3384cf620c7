import { defineConfig } from 'drizzle-kit';

// The approvals domain: `npx drizzle-kit generate --config apps/gateway/drizzle.approvals.config.ts --name <what>`.
export default defineConfig({
  dialect: 'sqlite',
  schema: './apps/gateway/src/store/sqlite/approvals-schema.ts',
  out: './apps/gateway/drizzle/sqlite-approvals',
});
