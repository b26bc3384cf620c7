import { defineConfig } from 'drizzle-kit';

// Identity domain (docs/design/store-domains.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.identity.config.ts --name <what>`.
export default defineConfig({
  dialect: 'sqlite',
  schema: './apps/gateway/src/store/sqlite/identity-schema.ts',
  out: './apps/gateway/drizzle/sqlite-identity',
});
