import { pgTable, text } from 'drizzle-orm/pg-core';

/**
 * PostgreSQL twin of store/sqlite/redaction-schema.ts. The account's redaction patterns (DESIGN §7): JavaScript regex sources applied to every output an AI reads and
 * to the stored audit arguments. One row per account; no row means no patterns.
 */
export const redactionPatterns = pgTable('redaction_patterns', {
  accountId: text('account_id').primaryKey(),
  /** The patterns as a JSON array of strings, validated by compileRedactionPatterns when set. */
  patterns: text('patterns').notNull(),
  updatedAt: text('updated_at').notNull(),
  updatedBy: text('updated_by').notNull(),
});
