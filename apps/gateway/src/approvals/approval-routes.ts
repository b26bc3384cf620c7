import { LetKiteError } from '@letkite/protocol';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import { requireUser, requireUserForChange } from '../identity/current-user';
import { approvalStatuses } from './approval-store';
import { loadApprovalFor, viewOf } from './approval-view';
import { approveRequest, type DecideDeps, denyRequest } from './decide-approval';
import { startPasskeyApproval } from './passkey-challenge';
import { subscribePush, unsubscribePush } from './push-subscriptions';

export type ApprovalRouteDeps = DecideDeps & { publicUrl: string };

const ListQuery = z.object({
  status: z.enum(approvalStatuses).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/**
 * The web app's approval API (mounted under /api). Reading needs a session; every change needs a session and the
 * CSRF checks. Approving needs a fresh passkey assertion or TOTP code besides (see decide-approval.ts).
 */
export function approvalRoutes(deps: ApprovalRouteDeps): Hono {
  const api = new Hono();
  const json = async (c: { req: { json(): Promise<unknown> } }) => c.req.json().catch(() => null);

  api.get('/approvals', async (c) => {
    const user = await requireUser(c, deps);
    const q = ListQuery.safeParse(c.req.query());
    if (!q.success) throw new LetKiteError('invalid_params', z.prettifyError(q.error));
    await deps.approvals.store.expireDue(deps.now().toISOString());
    const all = await deps.approvals.store.list(user.accountId, {
      limit: q.data.limit,
      ...(q.data.status ? { status: q.data.status } : {}),
    });
    const views = [];
    for (const r of all) {
      try {
        const { request, whyNot } = await loadApprovalFor(deps, user, r.id);
        views.push(await viewOf(deps, request, whyNot));
      } catch (err) {
        if (!(err instanceof LetKiteError && err.code === 'not_found')) throw err;
      }
    }
    return c.json({ approvals: views });
  });

  api.get('/approvals/:id', async (c) => {
    const user = await requireUser(c, deps);
    const { request, whyNot } = await loadApprovalFor(deps, user, c.req.param('id'));
    return c.json({ approval: await viewOf(deps, request, whyNot) });
  });

  api.post('/approvals/:id/passkey-options', async (c) => {
    const user = await requireUserForChange(c, deps);
    return c.json(await startPasskeyApproval(deps, user, c.req.param('id')));
  });

  api.post('/approvals/:id/approve', bodyLimit({ maxSize: 64 * 1024 }), async (c) => {
    const user = await requireUserForChange(c, deps);
    const r = await approveRequest(deps, user, c.req.param('id'), await json(c));
    return c.json({ approval: await viewOf(deps, r, null) });
  });

  api.post('/approvals/:id/deny', async (c) => {
    const user = await requireUserForChange(c, deps);
    const r = await denyRequest(deps, user, c.req.param('id'));
    return c.json({ approval: await viewOf(deps, r, null) });
  });

  api.get('/push/vapid-public-key', async (c) => {
    await requireUser(c, deps);
    return c.json({ public_key: await deps.approvals.vapidPublicKey() });
  });

  api.post('/push/subscriptions', bodyLimit({ maxSize: 8 * 1024 }), async (c) => {
    const user = await requireUserForChange(c, deps);
    return c.json(await subscribePush(deps, user, await json(c), c.req.header('user-agent')), 201);
  });

  api.delete('/push/subscriptions', bodyLimit({ maxSize: 8 * 1024 }), async (c) => {
    const user = await requireUserForChange(c, deps);
    return c.json(await unsubscribePush(deps, user, await json(c)));
  });

  return api;
}
