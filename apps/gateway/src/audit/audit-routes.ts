import { LetKiteError } from '@letkite/protocol';
import {
  AuditExportRequest,
  AuditFilter,
  AuditListRequest,
  type AuditListResponse,
  AuditSettings,
  type AuditVerifyResponse,
} from '@letkite/protocol/api';
import { type Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { requireUser, requireUserForChange, type SessionDeps, type SignedInUser } from '../identity/current-user';
import { parseInput, requirePermission } from '../identity/op-context';
import type { AuditVerification } from '../store/types';
import {
  auditCsvHeader,
  auditCsvLine,
  auditJsonLine,
  auditNames,
  auditQueryOf,
  auditRowsOldestFirst,
  auditView,
  decodeCursor,
  encodeCursor,
} from './audit-view';
import { pruneByRetention } from './prune-audit';

export interface AuditRouteDeps extends SessionDeps {
  log: (msg: string) => void;
  /** How often the live tail looks for new rows (ms); every process writing the database is seen. */
  auditPollMs?: number;
}

const DEFAULT_PAGE = 100;
const TAIL_BATCH = 500;

/** `verifyAudit`'s answer in the API's snake_case. */
export function verificationView(v: AuditVerification): AuditVerifyResponse {
  return v.ok
    ? { ok: true, rows: v.rows, head_id: v.headId, anchor_id: v.anchorId }
    : { ok: false, rows: v.rows, broken_id: v.brokenId, reason: v.reason, message: v.message };
}

async function reader(c: Context, deps: AuditRouteDeps): Promise<SignedInUser> {
  const user = await requireUser(c, deps);
  requirePermission(user, 'audit.read');
  return user;
}

/**
 * The activity log's REST routes (mounted at `/api`): list with filters and a cursor, export (JSON lines or CSV,
 * streamed), live tail (server-sent events), chain verification, and the retention setting. Reading needs
 * `audit.read`; changing the retention (which deletes history) needs an owner or admin.
 */
export function auditRoutes(deps: AuditRouteDeps): Hono {
  const api = new Hono();

  api.get('/audit', async (c) => {
    const user = await reader(c, deps);
    const input = parseInput(AuditListRequest, c.req.query());
    const limit = input.limit ?? DEFAULT_PAGE;
    const query = auditQueryOf(input, limit + 1);
    if (input.cursor !== undefined) query.beforeId = decodeCursor(input.cursor);
    const rows = await deps.store.listAudit(user.accountId, query);
    const page = rows.slice(0, limit);
    const names = await auditNames(deps.store, user.accountId, page);
    const last = page.at(-1);
    const body: AuditListResponse = {
      events: page.map((e) => auditView(e, names)),
      next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null,
    };
    c.header('Cache-Control', 'no-store');
    return c.json(body);
  });

  api.get('/audit/export', async (c) => {
    const user = await reader(c, deps);
    const input = parseInput(AuditExportRequest, c.req.query());
    const { format, ...filter } = input;
    // Taking the log out of the gateway is itself an event worth a row.
    await deps.store.appendAudit({
      accountId: user.accountId,
      at: deps.now().toISOString(),
      actor: `user:${user.userId}`,
      action: 'audit.export',
      outcome: 'ok',
      details: { format, filter },
    });
    const names = await auditNames(deps.store, user.accountId, []);
    const encoder = new TextEncoder();
    const rows = auditRowsOldestFirst(deps.store, user.accountId, filter);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (format === 'csv') controller.enqueue(encoder.encode(auditCsvHeader()));
      },
      async pull(controller) {
        try {
          const next = await rows.next();
          if (next.done) {
            controller.close();
            return;
          }
          const view = auditView(next.value, names);
          controller.enqueue(encoder.encode(format === 'csv' ? auditCsvLine(view) : auditJsonLine(view)));
        } catch (err) {
          deps.log(`audit export failed: ${String(err)}`);
          controller.error(err);
        }
      },
      async cancel() {
        await rows.return(undefined);
      },
    });
    const stamp = deps.now().toISOString().replace(/[:.]/g, '-');
    return new Response(body, {
      headers: {
        'Content-Type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
        'Content-Disposition': `attachment; filename="letkite-activity-${stamp}.${format}"`,
        'Cache-Control': 'no-store',
      },
    });
  });

  api.get('/audit/stream', async (c) => {
    const user = await reader(c, deps);
    const filter = parseInput(AuditFilter, c.req.query());
    const resumeFrom = c.req.header('last-event-id') ?? c.req.query('after');
    let lastId: number;
    if (resumeFrom !== undefined && /^\d+$/.test(resumeFrom)) lastId = Number(resumeFrom);
    else lastId = (await deps.store.listAudit(user.accountId, { limit: 1 }))[0]?.id ?? 0;
    const pollMs = deps.auditPollMs ?? 1000;
    c.header('Cache-Control', 'no-store');
    return streamSSE(
      c,
      async (stream) => {
        let idle = 0;
        await stream.writeSSE({ event: 'ready', data: JSON.stringify({ after: lastId }) });
        while (!stream.aborted && !stream.closed) {
          // The newest id first, then the matching rows up to it: a filtered tail moves past rows it does not
          // show, and a row written between the two reads is picked up next time rather than skipped.
          const newest = (await deps.store.listAudit(user.accountId, { limit: 1 }))[0]?.id ?? lastId;
          if (newest > lastId) {
            const rows = await deps.store.listAudit(user.accountId, {
              ...auditQueryOf(filter, TAIL_BATCH),
              afterId: lastId,
              beforeId: newest + 1,
              ascending: true,
            });
            const names = await auditNames(deps.store, user.accountId, rows);
            for (const r of rows) {
              await stream.writeSSE({ id: String(r.id), event: 'audit', data: JSON.stringify(auditView(r, names)) });
            }
            lastId = rows.length === TAIL_BATCH ? (rows.at(-1)?.id ?? newest) : newest;
            idle = 0;
          } else {
            idle += pollMs;
            // A comment now and then keeps proxies from closing an idle stream.
            if (idle >= 15_000) {
              await stream.write(': keep-alive\n\n');
              idle = 0;
            }
          }
          await stream.sleep(pollMs);
        }
      },
      // The client went away or the store closed under the stream: end it quietly.
      async () => {},
    );
  });

  api.get('/audit/verify', async (c) => {
    const user = await reader(c, deps);
    c.header('Cache-Control', 'no-store');
    return c.json(verificationView(await deps.store.verifyAudit(user.accountId)));
  });

  api.get('/audit/settings', async (c) => {
    const user = await reader(c, deps);
    return c.json({ retention_days: await deps.store.getAuditRetention(user.accountId) } satisfies AuditSettings);
  });

  api.put('/audit/settings', async (c) => {
    const user = await requireUserForChange(c, deps);
    requirePermission(user, 'audit.read');
    if (user.role !== 'owner' && user.role !== 'admin') {
      throw new LetKiteError('forbidden', 'only an owner or admin may change how long the activity log is kept');
    }
    const input = parseInput(AuditSettings, await c.req.json().catch(() => ({})));
    const now = deps.now();
    await deps.store.setAuditRetention(user.accountId, input.retention_days, {
      accountId: user.accountId,
      at: now.toISOString(),
      actor: `user:${user.userId}`,
      action: 'audit.retention',
      outcome: 'ok',
      details: { retention_days: input.retention_days },
    });
    await pruneByRetention(deps.store, user.accountId, now);
    return c.json({ retention_days: input.retention_days } satisfies AuditSettings);
  });

  return api;
}
