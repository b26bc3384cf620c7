import { defineConfig } from 'drizzle-kit';

// The account policies and account switches (docs/design/store-domains.md, docs/design/account-policies.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.policies.config.ts --name <what>`.
export default defineConfig({
  dialect: 'sqlite',
  schema: './apps/gateway/src/store/sqlite/policies-schema.ts',
  out: './apps/gateway/drizzle/sqlite-policies',
});
