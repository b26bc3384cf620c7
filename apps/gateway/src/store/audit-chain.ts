import { createHash } from 'node:crypto';
import type { AuditEventInput } from './types';

/**
 * The dialect-free half of the audit hash chain: the row an event becomes and its hash. Both stores (SQLite's
 * store/sqlite/audit.ts, PostgreSQL's store/postgres/pg-audit.ts) hash with this, so a log verifies the same
 * whichever database holds it.
 */

/** The `prev_hash` of an account's first row. */
export const GENESIS_HASH = '0'.repeat(64);

/** A row as the chain sees it: every column that is hashed. */
export interface ChainedRow {
  id: number;
  accountId: string;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  decision: string | null;
  outcome: string | null;
  /** The stored JSON text, hashed byte for byte (re-serializing could reorder keys). */
  details: string;
  userId: string | null;
  tool: string | null;
  machineId: string | null;
  credentialId: string | null;
  clientName: string | null;
  requestId: string | null;
  durationMs: number | null;
  prevHash: string;
}

/**
 * SHA-256 (hex) over the canonical encoding of a row: a JSON array of its columns in a fixed order, led by a
 * version tag. JSON.stringify of strings, numbers and nulls in an array is deterministic.
 */
export function auditRowHash(r: ChainedRow): string {
  const encoding = JSON.stringify([
    'letkite.audit.v1',
    r.id,
    r.accountId,
    r.at,
    r.actor,
    r.action,
    r.target,
    r.decision,
    r.outcome,
    r.details,
    r.userId,
    r.tool,
    r.machineId,
    r.credentialId,
    r.clientName,
    r.requestId,
    r.durationMs,
    r.prevHash,
  ]);
  return createHash('sha256').update(encoding).digest('hex');
}

/** The id after a `kind:` prefix of an actor label, or null. */
function actorId(actor: string, kinds: readonly string[]): string | null {
  const colon = actor.indexOf(':');
  if (colon < 0 || !kinds.includes(actor.slice(0, colon))) return null;
  return actor.slice(colon + 1) || null;
}

/** The row an event becomes, before it has its place in the chain. */
export function auditRowOf(e: AuditEventInput): Omit<ChainedRow, 'id' | 'prevHash'> {
  return {
    accountId: e.accountId,
    at: e.at,
    actor: e.actor,
    action: e.action,
    target: e.target ?? null,
    decision: e.decision ?? null,
    outcome: e.outcome ?? null,
    details: JSON.stringify(e.details ?? {}),
    userId: e.userId ?? actorId(e.actor, ['user']),
    tool: e.tool ?? (e.action.startsWith('tool.') ? e.action.slice(5) : null),
    machineId: e.machineId ?? null,
    credentialId: e.credentialId ?? actorId(e.actor, ['connection', 'token']),
    clientName: e.clientName ?? null,
    requestId: e.requestId ?? null,
    durationMs: e.durationMs === undefined || e.durationMs === null ? null : Math.round(e.durationMs),
  };
}
