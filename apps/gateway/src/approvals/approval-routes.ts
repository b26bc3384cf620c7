import { LetKiteError } from '@letkite/protocol';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { UserActor } from '../services/actor';
import { userRoute } from '../services/adapters/rest';
import { defineService } from '../services/define-service';
import type { ServiceContext } from '../services/service-context';
import { approvalStatuses } from './approval-store';
import { loadApprovalFor, viewOf } from './approval-view';
import {
  ApprovalRef,
  ApproveRequestInput,
  approveRequest,
  type DecideContext,
  type DecideDeps,
  denyRequest,
} from './decide-approval';
import { startPasskeyApproval } from './passkey-challenge';
import { subscribePush, unsubscribePush } from './push-subscriptions';

export type ApprovalRouteDeps = DecideDeps & { publicUrl: string };
type RouteContext = ServiceContext<ApprovalRouteDeps, UserActor>;

const ListQuery = z.object({
  status: z.enum(approvalStatuses).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** The approvals the person may see, newest first (expired ones are settled first, so they show as expired). */
export const listApprovals = defineService({
  name: 'listApprovals',
  input: ListQuery,
  run: async (ctx: RouteContext, input) => {
    const { deps } = ctx;
    const user = ctx.actor.user;
    await deps.approvals.store.expireDue(ctx.now.toISOString());
    const all = await deps.approvals.store.list(user.accountId, {
      limit: input.limit,
      ...(input.status ? { status: input.status } : {}),
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
    return { approvals: views };
  },
});

/** One approval request as its page shows it. */
export const showApproval = defineService({
  name: 'showApproval',
  input: ApprovalRef,
  run: async (ctx: RouteContext, input) => {
    const { request, whyNot } = await loadApprovalFor(ctx.deps, ctx.actor.user, input.id);
    return { approval: await viewOf(ctx.deps, request, whyNot) };
  },
});

/** A fresh passkey challenge bound to the request (what the approver's passkey signs). */
export const passkeyOptions = defineService({
  name: 'approvalPasskeyOptions',
  input: ApprovalRef,
  run: (ctx: RouteContext, input) => startPasskeyApproval(ctx.deps, ctx.actor.user, input.id),
});

/** Approves with a fresh passkey assertion or TOTP code (decide-approval.ts). */
export const approve = defineService({
  name: 'approveRequest',
  input: ApproveRequestInput,
  run: async (ctx: DecideContext & RouteContext, input) => ({
    approval: await viewOf(ctx.deps, await approveRequest(ctx, input), null),
  }),
});

/** Denies: being allowed to decide is enough. */
export const deny = defineService({
  name: 'denyRequest',
  input: ApprovalRef,
  run: async (ctx: RouteContext, input) => ({ approval: await viewOf(ctx.deps, await denyRequest(ctx, input), null) }),
});

/** The gateway's VAPID public key, for the browser's push subscription. */
export const vapidPublicKey = defineService({
  name: 'vapidPublicKey',
  input: z.object({}),
  run: async (ctx: RouteContext) => ({ public_key: await ctx.deps.approvals.vapidPublicKey() }),
});

/** Subscribes this browser to approval notifications (the subscription is parsed by push-subscriptions.ts). */
export const subscribe = defineService({
  name: 'subscribePush',
  input: z.unknown(),
  run: (ctx: RouteContext, body) => subscribePush(ctx.deps, ctx.actor.user, body, ctx.caller?.userAgent ?? undefined),
});

/** Removes this browser's subscription. */
export const unsubscribe = defineService({
  name: 'unsubscribePush',
  input: z.unknown(),
  run: (ctx: RouteContext, body) => unsubscribePush(ctx.deps, ctx.actor.user, body),
});

/**
 * The web app's approval API (mounted under /api), over the REST adapter: reading needs a session; every change
 * needs a session and the CSRF checks. Approving needs a fresh passkey assertion or TOTP code besides (see
 * decide-approval.ts).
 */
export function approvalRoutes(deps: ApprovalRouteDeps): Hono {
  const api = new Hono();
  api.get('/approvals', userRoute(deps, listApprovals));
  api.get('/approvals/:id', userRoute(deps, showApproval));
  api.post('/approvals/:id/passkey-options', userRoute(deps, passkeyOptions));
  api.post('/approvals/:id/approve', bodyLimit({ maxSize: 64 * 1024 }), userRoute(deps, approve));
  api.post('/approvals/:id/deny', userRoute(deps, deny));
  api.get('/push/vapid-public-key', userRoute(deps, vapidPublicKey));
  api.post('/push/subscriptions', bodyLimit({ maxSize: 8 * 1024 }), userRoute(deps, subscribe, { status: 201 }));
  api.delete('/push/subscriptions', bodyLimit({ maxSize: 8 * 1024 }), userRoute(deps, unsubscribe));
  return api;
}
