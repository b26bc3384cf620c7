import type { ErrorCode } from '@letkite/protocol';
import type { z } from 'zod';
import type { Actor } from '../actor';
import type { Service } from '../define-service';
import { newRequestId, type ServiceContext } from '../service-context';

/** Exit codes of `letkite` commands (the CLI's io.ts spells the same numbers). */
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/**
 * The CLI surface's one error table (REVIEW §4.2): bad input is a usage error (2), anything else a failure (1) — the
 * exit codes `letkite` always had. A new code does not compile until it is mapped here.
 */
export const cliExitCodeOf: Record<ErrorCode, typeof EXIT_FAILED | typeof EXIT_USAGE> = {
  invalid_params: EXIT_USAGE,
  unauthenticated: EXIT_FAILED,
  forbidden: EXIT_FAILED,
  machine_not_found: EXIT_FAILED,
  ambiguous_machine: EXIT_FAILED,
  machine_offline: EXIT_FAILED,
  blocked_by_policy: EXIT_FAILED,
  blocked_by_ceiling: EXIT_FAILED,
  confirmation_required: EXIT_FAILED,
  approval_pending: EXIT_FAILED,
  approval_denied: EXIT_FAILED,
  approval_expired: EXIT_FAILED,
  too_many_pending_approvals: EXIT_FAILED,
  not_found: EXIT_FAILED,
  too_large: EXIT_FAILED,
  timeout: EXIT_FAILED,
  rate_limited: EXIT_FAILED,
  unsupported: EXIT_FAILED,
  not_implemented: EXIT_FAILED,
  conflict: EXIT_FAILED,
  invalid_token: EXIT_FAILED,
  protocol_error: EXIT_FAILED,
  internal: EXIT_FAILED,
  invalid_config: EXIT_FAILED,
};

/** The actor of an administrator's command on the gateway host (`cli:admin`). */
export type CliActor = Extract<Actor, { kind: 'cli' }>;

/**
 * The context of an admin command: the `cli` actor (who can read the data directory is the installation's owner,
 * so it holds every permission) acting in one account.
 */
export function cliContext<D>(
  deps: D,
  account: string,
  now: Date = new Date(),
  command = 'admin',
): ServiceContext<D, CliActor> {
  return { actor: { kind: 'cli', command }, account, deps, now, requestId: newRequestId() };
}

/**
 * The CLI adapter: runs an operation with input built from the command's flags (parsed by the operation's own
 * schema, so a bad flag value is `invalid_params` naming it). Errors propagate; the CLI maps them with
 * `cliExitCodeOf`.
 */
export function runCli<I extends z.ZodType, O, D>(
  service: Service<I, O, ServiceContext<D, CliActor>>,
  ctx: ServiceContext<D, CliActor>,
  input: unknown,
): Promise<O> {
  return service.call(ctx, input);
}
