import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import type { GatewayDeps } from '../deps';
import type { McpEndpoint } from '../mcp/mcp-endpoint';
import type { AnonymousActor, UserActor } from '../services/actor';
import { parseServiceInput } from '../services/define-service';
import { auditEvent, type ServiceContext } from '../services/service-context';
import type { AuditEventInput } from '../store/types';
import type { SignedInUser } from './current-user';
import { hasPermission, type Permission } from './permissions';

/** The gateway's dependencies as identity operations see them: plus the MCP endpoint, to cut live sessions. */
export interface IdentityDeps
  extends Pick<
    GatewayDeps,
    'store' | 'identity' | 'policies' | 'mailer' | 'hub' | 'coordination' | 'now' | 'log' | 'publicUrl'
  > {
  mcp: Pick<McpEndpoint, 'closeSessionsOf' | 'closeSessionsOfUser'>;
}

/** What an operation run by a signed-in person gets: the service context with the person as its actor. */
export type OpContext = ServiceContext<IdentityDeps, UserActor>;

/** What an operation run before anyone is signed in gets (sign-in, first-run setup): an `anonymous` actor. */
export type AnonymousContext = ServiceContext<IdentityDeps, AnonymousActor>;

/** The input of an operation that takes none (path params and query strings are ignored, not refused). */
export const NoInput = z.object({});

/** Refuses with `forbidden` unless the person holds the permission. */
export function requirePermission(user: SignedInUser, permission: Permission): void {
  if (!hasPermission(user, permission)) {
    throw new LetKiteError('forbidden', `this needs the "${permission}" permission`, { permission });
  }
}

/** Parses an operation's input, or `invalid_params` naming every problem (the service layer's one parser). */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  return parseServiceInput(schema, input);
}

/** The audit event of an operation by the signed-in person (the service layer's `auditEvent`). */
export function auditBy(
  ctx: OpContext,
  action: string,
  target: string | null,
  details: Record<string, unknown> = {},
): AuditEventInput {
  return auditEvent(ctx, action, target, details);
}

/** What an operation run before anyone is signed in gets (sign-in, first-run setup, accepting an invitation). */
export interface PublicOpContext {
  deps: IdentityDeps;
  now: Date;
  userAgent: string | null;
  /** The client's address, for rate limits ('' when unknown). */
  clientAddress: string;
}
