import { LetKiteError } from '@letkite/protocol';
import { PgMcpSessionStore } from '../store/postgres/pg-mcp-session-store';
import { PgStore } from '../store/postgres/pg-store';
import { SqliteMcpSessionStore } from '../store/sqlite/sqlite-mcp-session-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { Store } from '../store/types';
import type { McpSessionStore } from './mcp-session-store';

/** The MCP session store on the core store's database. */
export function openMcpSessionStore(store: Store): McpSessionStore {
  if (store instanceof SqliteStore) return new SqliteMcpSessionStore(store);
  if (store instanceof PgStore) return new PgMcpSessionStore(store.database);
  throw new LetKiteError('not_implemented', 'the MCP session store exists only for SQLite and PostgreSQL');
}
