import { sql } from 'drizzle-orm';
import { auditRowHash, auditRowOf, type ChainedRow, GENESIS_HASH } from '../audit-chain';
import type { AuditEventInput } from '../types';
import type { PgDatabase, PgTx } from './pg-database';

/**
 * The one audit insert on PostgreSQL (the twin of store/sqlite/audit.ts, same row hash): call it with the
 * transaction of the change it records. The account's `audit_chains` row is created if missing and locked (the
 * row lock of an upsert, as `FOR UPDATE` would) as the head is read and the id drawn, so concurrent inserts for
 * one account — on any gateway — chain one after the other and ids follow the chain; the unique index on
 * (account_id, prev_hash) refuses a fork regardless. Returns the row's id.
 */
export async function insertAudit(tx: PgTx, e: AuditEventInput): Promise<number> {
  const row = auditRowOf(e);
  // One statement creates the chain row if missing, locks it (ON CONFLICT DO UPDATE takes the row lock and, on READ
  // COMMITTED, returns the newest committed head once a concurrent append commits) and draws the id under the lock.
  // Every tool call writes a row, so two round trips instead of five matter.
  const head = await tx.execute<{ head_hash: string | null; id: string }>(
    sql`INSERT INTO audit_chains (account_id) VALUES (${row.accountId})
        ON CONFLICT (account_id) DO UPDATE SET account_id = excluded.account_id
        RETURNING head_hash, nextval('audit_events_id_seq') AS id`,
  );
  const prevHash = head.rows[0]?.head_hash ?? GENESIS_HASH;
  const id = Number(head.rows[0]?.id);
  const chained: ChainedRow = { ...row, id, prevHash };
  const hash = auditRowHash(chained);
  await tx.execute(sql`WITH inserted AS (
      INSERT INTO audit_events (id, account_id, at, actor, action, target, decision, outcome, details, user_id, tool,
        machine_id, credential_id, client_name, request_id, duration_ms, prev_hash, hash)
      VALUES (${id}, ${row.accountId}, ${row.at}, ${row.actor}, ${row.action}, ${row.target}, ${row.decision},
        ${row.outcome}, ${row.details}, ${row.userId}, ${row.tool}, ${row.machineId}, ${row.credentialId},
        ${row.clientName}, ${row.requestId}, ${row.durationMs}, ${prevHash}, ${hash}))
    UPDATE audit_chains SET head_id = ${id}, head_hash = ${hash} WHERE account_id = ${row.accountId}`);
  return id;
}

/** An audit row on its own (a tool call, a sign-in): its own transaction. */
export function appendAuditRow(database: PgDatabase, e: AuditEventInput): Promise<number> {
  return database.transaction((tx) => insertAudit(tx, e));
}
