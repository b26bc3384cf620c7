import { defineConfig } from 'drizzle-kit';

// The wake domain: machines' reported interfaces for Wake-on-LAN (docs/design/store-domains.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.wake.config.ts --name <what>`.
export default defineConfig({
  dialect: 'sqlite',
  schema: './apps/gateway/src/store/sqlite/wake-schema.ts',
  out: './apps/gateway/drizzle/sqlite-wake',
});
