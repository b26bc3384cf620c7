import type { Principal } from '../../auth/principal';
import type { GatewayDeps } from '../../deps';

/**
 * Where a connection's terminals, jobs and shell sessions live. A handle id means something only to the agent that
 * made it, and a resource URI carries no machine, so the machine is found in the activity log: the successful
 * `terminal_open`, `job_start` or `shell_run` of this very credential that returned the id. The log is in the
 * store, so any gateway of a cluster finds it, and another connection's handle is simply not there (`not_found`,
 * like the tools). The agent still checks ownership on every read.
 */
export type HandleKind = 'terminal' | 'job' | 'shell_session';

const toolOf: Record<HandleKind, string> = { terminal: 'terminal_open', job: 'job_start', shell_session: 'shell_run' };
const keyOf: Record<HandleKind, string> = { terminal: 'terminal_id', job: 'job_id', shell_session: 'session_id' };

/** How far back the log is searched: agents drop idle terminals and sessions long before, finished jobs after 24 h. */
const LOOKBACK_MS = 48 * 3_600_000;
const MAX_ROWS = 500;

export interface KnownHandle {
  id: string;
  machineId: string;
  /** The newest call of this credential that named it. */
  lastUsedAt: string;
}

/** The handles of one kind this credential made, newest use first (one entry per id). */
export async function knownHandles(
  deps: Pick<GatewayDeps, 'store' | 'now'>,
  principal: Pick<Principal, 'accountId' | 'credentialId'>,
  kind: HandleKind,
): Promise<KnownHandle[]> {
  const rows = await deps.store.listAudit(principal.accountId, {
    limit: MAX_ROWS,
    toolCalls: true,
    tool: toolOf[kind],
    credentialId: principal.credentialId,
    outcome: 'ok',
    since: new Date(deps.now().getTime() - LOOKBACK_MS).toISOString(),
  });
  const seen = new Map<string, KnownHandle>();
  for (const row of rows) {
    const id = row.details[keyOf[kind]];
    if (typeof id !== 'string' || row.machineId === null || seen.has(id)) continue;
    seen.set(id, { id, machineId: row.machineId, lastUsedAt: row.at });
  }
  return [...seen.values()];
}

/** The machine a handle of this credential lives on, or null when this credential never made it. */
export async function machineOfHandle(
  deps: Pick<GatewayDeps, 'store' | 'now'>,
  principal: Pick<Principal, 'accountId' | 'credentialId'>,
  kind: HandleKind,
  id: string,
): Promise<string | null> {
  return (await knownHandles(deps, principal, kind)).find((h) => h.id === id)?.machineId ?? null;
}
