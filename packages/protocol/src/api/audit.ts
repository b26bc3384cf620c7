import { z } from 'zod';
import { Timestamp } from './common';
import { endpoint } from './endpoint';

/**
 * The activity log's REST contract (issue #14): one row per tool call, admin action and sign-in, newest first,
 * filtered and paged by an opaque cursor; an export (JSON lines or CSV) and a live tail (server-sent events).
 */

/**
 * Every action an audit row can have besides tool calls (`tool.<name>`). A closed set: a new action is added
 * here, so the web app's filter and the gateway's writers cannot drift apart.
 */
export const auditActions = [
  'account.bootstrap',
  'owner.setup',
  'session.create',
  'session.sign_out',
  'session.revoke',
  'user.lockout',
  'password.set',
  'password.remove',
  'passkey.add',
  'passkey.remove',
  'recovery_codes.regenerate',
  'member.role',
  'member.remove',
  'invitation.create',
  'invitation.revoke',
  'invitation.accept',
  'setup_link.create',
  'role.create',
  'role.update',
  'role.delete',
  'group.create',
  'group.update',
  'group.delete',
  'api_token.create',
  'api_token.revoke',
  'join_token.create',
  'machine.enroll',
  'machine.rename',
  'machine.remove',
  'machine.ceiling_error',
  'oauth.consent',
  'connection.create',
  'connection.revoke',
  'approval.request',
  'approval.approve',
  'approval.deny',
  'approval.expire',
  'approval.use',
  'push.subscribe',
  'push.unsubscribe',
  'redaction.set',
  'policy.create',
  'policy.update',
  'policy.delete',
  'account_settings.update',
  'audit.retention',
  'audit.prune',
  'audit.export',
  'takeover.notice',
] as const;
export type AuditAction = (typeof auditActions)[number];

/** A tool call's action: `tool.exec`, `tool.write_file`, … */
export const toolCallAction = (tool: string) => `tool.${tool}`;

/** Whether an action name is one of `auditActions` or a tool call. */
export function isAuditAction(action: string): boolean {
  return (auditActions as readonly string[]).includes(action) || /^tool\.[a-z_]+$/.test(action);
}

/** One row of the activity log. `details` holds the masked arguments, verdict reasons, approval id and so on. */
export const AuditEventView = z.object({
  id: z.number().int().positive(),
  at: Timestamp,
  /** `user:<id>`, `connection:<id>`, `token:<id>`, `agent:<machine>`, `system`, `cli:admin`. */
  actor: z.string(),
  action: z.string(),
  target: z.string().nullable(),
  /** For tool calls: the verdict (allow, confirm, approve, deny). */
  decision: z.string().nullable(),
  /** `ok`, `approval_pending`, or the error code that refused or failed it. */
  outcome: z.string().nullable(),
  user_id: z.string().nullable(),
  /** Display name of `user_id` when the person still exists. */
  user_name: z.string().nullable(),
  tool: z.string().nullable(),
  machine_id: z.string().nullable(),
  machine_name: z.string().nullable(),
  credential_id: z.string().nullable(),
  /** The MCP client's own name for itself: declared by the client, not verified. */
  client_name: z.string().nullable(),
  request_id: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
  details: z.record(z.string(), z.unknown()),
  hash: z.string().nullable(),
  prev_hash: z.string().nullable(),
});
export type AuditEventView = z.infer<typeof AuditEventView>;

const optionalText = z.string().trim().min(1).max(200).optional();

/** The filters every audit read takes (query parameters); all narrow. */
export const AuditFilter = z.object({
  /** ISO-8601 instant, inclusive. */
  since: Timestamp.optional(),
  /** ISO-8601 instant, exclusive. */
  until: Timestamp.optional(),
  /** A user id: rows by that person, including their connections' and tokens' tool calls. */
  person: optionalText,
  /** A connection or API token id. */
  connection: optionalText,
  /** A machine id. */
  machine: optionalText,
  tool: optionalText,
  /** `ok`, an error code, or `error` for every failure. */
  outcome: optionalText,
  /** One action, or `tool` for every tool call. */
  action: optionalText,
});
export type AuditFilter = z.infer<typeof AuditFilter>;

export const AuditListRequest = AuditFilter.extend({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  /** The `next_cursor` of the previous page. */
  cursor: z.string().max(200).optional(),
});
export type AuditListRequest = z.infer<typeof AuditListRequest>;

export const AuditListResponse = z.object({
  events: z.array(AuditEventView),
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type AuditListResponse = z.infer<typeof AuditListResponse>;

export const auditExportFormats = ['jsonl', 'csv'] as const;
export const AuditExportRequest = AuditFilter.extend({ format: z.enum(auditExportFormats).default('jsonl') });
export type AuditExportRequest = z.infer<typeof AuditExportRequest>;

/** The CSV export's columns, in order; `details` is its JSON text. */
export const auditCsvColumns = [
  'id',
  'at',
  'actor',
  'action',
  'target',
  'decision',
  'outcome',
  'user_id',
  'tool',
  'machine_id',
  'credential_id',
  'client_name',
  'request_id',
  'duration_ms',
  'details',
  'prev_hash',
  'hash',
] as const;

/** The account's retention of the activity log: rows older than `retention_days` are pruned (null: never). */
export const AuditSettings = z.object({ retention_days: z.number().int().min(1).max(36_500).nullable() });
export type AuditSettings = z.infer<typeof AuditSettings>;

/** What `letkite admin audit verify` and `GET /api/audit/verify` report. */
export const AuditVerifyResponse = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    rows: z.number().int(),
    head_id: z.number().int().nullable(),
    anchor_id: z.number().int().nullable(),
  }),
  z.object({
    ok: z.literal(false),
    rows: z.number().int(),
    broken_id: z.number().int(),
    reason: z.enum(['row_changed', 'chain_broken', 'head_mismatch', 'unsealed']),
    message: z.string(),
  }),
]);
export type AuditVerifyResponse = z.infer<typeof AuditVerifyResponse>;

/** The REST routes of the activity log (permission `audit.read`; changing the retention needs `members.manage`). */
export const auditEndpoints = {
  list: endpoint({ method: 'GET', path: '/api/audit', request: AuditListRequest, response: AuditListResponse }),
  verify: endpoint({ method: 'GET', path: '/api/audit/verify', response: AuditVerifyResponse }),
  settings: endpoint({ method: 'GET', path: '/api/audit/settings', response: AuditSettings }),
  setSettings: endpoint({
    method: 'PUT',
    path: '/api/audit/settings',
    request: AuditSettings,
    response: AuditSettings,
  }),
} as const;

/** Paths that are not JSON request/response pairs: the export download and the live tail (text/event-stream). */
export const auditExportPath = '/api/audit/export';
export const auditStreamPath = '/api/audit/stream';
