import { defineConfig } from 'drizzle-kit';

// `npx drizzle-kit generate --config apps/gateway/drizzle.config.ts` writes a new migration after a schema change;
// the gateway applies migrations at start-up.
export default defineConfig({
  dialect: 'sqlite',
  schema: './apps/gateway/src/store/sqlite/schema.ts',
  out: './apps/gateway/drizzle/sqlite',
});
