import { randomUUID } from 'node:crypto';
import type { GatewayDeps } from '../deps';
import type { AuditEventInput } from '../store/types';
import { type Actor, actorLabel } from './actor';

/**
 * What every operation gets besides its input (REVIEW §2.3-1): who acts, in which account, the gateway's
 * dependencies, one clock reading for the whole operation, and an id that ties its log lines together.
 * `D` narrows the dependencies an operation needs (tests pass less); `A` narrows the actor when the surface
 * guarantees it (a signed-in route always has a `user` actor).
 */
export interface ServiceContext<D = GatewayDeps, A extends Actor = Actor> {
  actor: A;
  /** The account the operation acts in; null only before sign-in (the operation finds the account itself). */
  account: string | null;
  deps: D;
  /** Read once when the operation starts: every timestamp it writes is this one. */
  now: Date;
  requestId: string;
  /** Where a web request came from, for rate limits and the sessions list (absent off the web). */
  caller?: { userAgent: string | null; address: string };
}

/** A fresh request id (random: ids from two gateways never collide). */
export function newRequestId(): string {
  return randomUUID();
}

/** Builds a context, reading the clock once. */
export function serviceContext<D extends { now: () => Date }, A extends Actor>(
  deps: D,
  actor: A,
  account: string | null,
  extra: { requestId?: string; caller?: ServiceContext['caller'] } = {},
): ServiceContext<D, A> {
  return {
    actor,
    account,
    deps,
    now: deps.now(),
    requestId: extra.requestId ?? newRequestId(),
    ...(extra.caller ? { caller: extra.caller } : {}),
  };
}

/**
 * The audit event of a successful operation, for the store to write in the same transaction as the change
 * (CONVENTIONS 4). `account` defaults to the context's.
 */
export function auditEvent(
  ctx: Pick<ServiceContext<unknown>, 'actor' | 'account' | 'now'> & { requestId?: string },
  action: string,
  target: string | null,
  details: Record<string, unknown> = {},
  account: string | null = ctx.account,
): AuditEventInput {
  // Fail closed: an event without an account would be written nowhere anyone can read it.
  if (account === null) throw new TypeError(`audit event "${action}" has no account`);
  return {
    accountId: account,
    at: ctx.now.toISOString(),
    actor: actorLabel(ctx.actor),
    action,
    target,
    outcome: 'ok',
    details,
    ...(ctx.requestId ? { requestId: ctx.requestId } : {}),
  };
}
