import { index, pgTable, text } from 'drizzle-orm/pg-core';

/**
 * PostgreSQL twin of store/sqlite/transfers-schema.ts (docs/design/coordination.md): the status of background
 * transfers (`transfer_start`), written by the gateway relaying each one, so `transfer_status` answers on any
 * gateway. Times are ISO-8601 UTC.
 */
export const transfers = pgTable(
  'transfers',
  {
    /** `tr_` + 96 random bits (base64url). */
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    /** running | done | failed | cancelled */
    state: text('state').notNull(),
    /** The `transfer_status` answer as last written (JSON). */
    status: text('status').notNull(),
    startedAt: text('started_at').notNull(),
    /** Written about once a second while running: a running row that stops being updated lost its gateway. */
    updatedAt: text('updated_at').notNull(),
    endedAt: text('ended_at'),
  },
  (t) => [index('transfers_ended').on(t.endedAt)],
);
