import { LetKiteError } from '@letkite/protocol';
import type { z } from 'zod';
import type { GatewayDeps } from '../deps';
import type { McpEndpoint } from '../mcp/mcp-endpoint';
import type { AuditEventInput } from '../store/types';
import type { SignedInUser } from './current-user';
import { hasPermission, type Permission } from './permissions';

/** The gateway's dependencies as identity operations see them: plus the MCP endpoint, to cut live sessions. */
export interface IdentityDeps
  extends Pick<GatewayDeps, 'store' | 'identity' | 'mailer' | 'hub' | 'coordination' | 'now' | 'log' | 'publicUrl'> {
  mcp: Pick<McpEndpoint, 'closeSessionsOf' | 'closeSessionsOfUser'>;
}

/** What an operation run by a signed-in person gets. */
export interface OpContext {
  deps: IdentityDeps;
  user: SignedInUser;
  now: Date;
}

/** Refuses with `forbidden` unless the person holds the permission. */
export function requirePermission(user: SignedInUser, permission: Permission): void {
  if (!hasPermission(user, permission)) {
    throw new LetKiteError('forbidden', `this needs the "${permission}" permission`, { permission });
  }
}

/** Parses an operation's input, or `invalid_params` naming the first problem. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    throw new LetKiteError('invalid_params', `${where}${issue?.message ?? 'invalid input'}`, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })),
    });
  }
  return parsed.data;
}

/** The audit event of an operation by the signed-in person. */
export function auditBy(
  ctx: OpContext,
  action: string,
  target: string | null,
  details: Record<string, unknown> = {},
): AuditEventInput {
  return {
    accountId: ctx.user.accountId,
    at: ctx.now.toISOString(),
    actor: `user:${ctx.user.userId}`,
    action,
    target,
    outcome: 'ok',
    details,
  };
}

/** What an operation run before anyone is signed in gets (sign-in, first-run setup, accepting an invitation). */
export interface PublicOpContext {
  deps: IdentityDeps;
  now: Date;
  userAgent: string | null;
  /** The client's address, for rate limits ('' when unknown). */
  clientAddress: string;
}
