import { defineConfig } from 'drizzle-kit';

// The OAuth domain's migrations (docs/design/store-domains.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.oauth.config.ts --name <what>`.
export default defineConfig({
  dialect: 'sqlite',
  schema: './apps/gateway/src/store/sqlite/oauth-schema.ts',
  out: './apps/gateway/drizzle/sqlite-oauth',
});
