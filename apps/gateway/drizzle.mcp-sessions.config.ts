import { defineConfig } from 'drizzle-kit';

// The MCP sessions domain's migrations (docs/design/store-domains.md):
// `npx drizzle-kit generate --config apps/gateway/drizzle.mcp-sessions.config.ts --name <what>`.
export default defineConfig({
  dialect: 'sqlite',
  schema: './apps/gateway/src/store/sqlite/mcp-sessions-schema.ts',
  out: './apps/gateway/drizzle/sqlite-mcp-sessions',
});
