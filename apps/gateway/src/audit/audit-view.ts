import { LetKiteError } from '@letkite/protocol';
import { type AuditEventView, type AuditFilter, auditCsvColumns } from '@letkite/protocol/api';
import type { AuditEvent, AuditQuery, Store } from '../store/types';

/** Names shown next to ids in the activity log (people and machines that still exist). */
export interface AuditNames {
  users: ReadonlyMap<string, string>;
  machines: ReadonlyMap<string, string>;
}

/** The account's people and machines by id, for `auditView`. */
export async function auditNames(
  store: Pick<Store, 'listMachines' | 'getUser'>,
  accountId: string,
  events: AuditEvent[],
): Promise<AuditNames> {
  const machines = new Map((await store.listMachines(accountId)).map((m) => [m.id, m.name] as const));
  const users = new Map<string, string>();
  for (const id of new Set(events.map((e) => e.userId).filter((u): u is string => u !== null))) {
    const u = await store.getUser(id);
    if (u) users.set(id, u.name);
  }
  return { users, machines };
}

/** A stored row as the REST API shows it (snake_case, with display names). */
export function auditView(e: AuditEvent, names?: AuditNames): AuditEventView {
  return {
    id: e.id,
    at: e.at,
    actor: e.actor,
    action: e.action,
    target: e.target,
    decision: e.decision,
    outcome: e.outcome,
    user_id: e.userId,
    user_name: (e.userId && names?.users.get(e.userId)) || null,
    tool: e.tool,
    machine_id: e.machineId,
    machine_name: (e.machineId && names?.machines.get(e.machineId)) || null,
    credential_id: e.credentialId,
    client_name: e.clientName,
    request_id: e.requestId,
    duration_ms: e.durationMs,
    details: e.details,
    hash: e.hash,
    prev_hash: e.prevHash,
  };
}

/** The store query of the REST/CLI filters (`action=tool` means every tool call). */
export function auditQueryOf(f: AuditFilter, limit: number): AuditQuery {
  return {
    limit,
    ...(f.since ? { since: new Date(f.since).toISOString() } : {}),
    ...(f.until ? { until: new Date(f.until).toISOString() } : {}),
    ...(f.person ? { userId: f.person } : {}),
    ...(f.connection ? { credentialId: f.connection } : {}),
    ...(f.machine ? { machineId: f.machine } : {}),
    ...(f.tool ? { tool: f.tool } : {}),
    ...(f.outcome ? { outcome: f.outcome } : {}),
    ...(f.action === 'tool' ? { toolCalls: true } : f.action ? { action: f.action } : {}),
  };
}

/**
 * The opaque page cursor: the last id of the page, base64url-encoded with a version. Ids only go up, so paging
 * by id is stable while new rows arrive.
 */
export function encodeCursor(id: number): string {
  return Buffer.from(JSON.stringify({ v: 1, before: id })).toString('base64url');
}

/** The id a cursor stands for; `invalid_params` for anything this gateway did not make. */
export function decodeCursor(cursor: string): number {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { v?: unknown; before?: unknown };
    if (
      parsed.v === 1 &&
      typeof parsed.before === 'number' &&
      Number.isSafeInteger(parsed.before) &&
      parsed.before > 0
    ) {
      return parsed.before;
    }
  } catch {
    // Falls through to the refusal.
  }
  throw new LetKiteError('invalid_params', `cursor "${cursor.slice(0, 40)}" is not one this API handed out`);
}

/** One CSV field: quoted when it holds a comma, quote or line break; a leading = + - @ is defused for spreadsheets. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let s = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The CSV header line (with CRLF, RFC 4180). */
export function auditCsvHeader(): string {
  return `${auditCsvColumns.join(',')}\r\n`;
}

/** One row of the CSV export. */
export function auditCsvLine(v: AuditEventView): string {
  return `${auditCsvColumns.map((c) => csvField(v[c])).join(',')}\r\n`;
}

/** One line of the JSON-lines export. */
export function auditJsonLine(v: AuditEventView): string {
  return `${JSON.stringify(v)}\n`;
}

/**
 * Every row matching the filter, oldest first, read in pages so an export of a large log never sits in memory
 * at once.
 */
export async function* auditRowsOldestFirst(
  store: Pick<Store, 'listAudit'>,
  accountId: string,
  filter: AuditFilter,
  pageSize = 500,
): AsyncGenerator<AuditEvent> {
  let afterId: number | undefined;
  for (;;) {
    const page = await store.listAudit(accountId, {
      ...auditQueryOf(filter, pageSize),
      ascending: true,
      ...(afterId === undefined ? {} : { afterId }),
    });
    yield* page;
    if (page.length < pageSize) return;
    afterId = page.at(-1)?.id;
  }
}
