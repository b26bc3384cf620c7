import { type LoggingLevel, LoggingLevelSchema } from '@modelcontextprotocol/sdk/types.js';

/** RFC 5424 severities in MCP's order, least severe first. */
const order = LoggingLevelSchema.options;

/** Whether a message at `level` passes the session's `threshold` (no threshold set: nothing is sent). */
export function passes(level: LoggingLevel, threshold: string | undefined): boolean {
  if (threshold === undefined) return false;
  const t = order.indexOf(threshold as LoggingLevel);
  return t >= 0 && order.indexOf(level) >= t;
}

export type SendLog = (level: LoggingLevel, data: Record<string, unknown>) => Promise<void>;

/**
 * `notifications/message` for one request: what the gateway notes about the session's own calls (the tool, the
 * outcome code, how long it took), sent on the request's own stream so it reaches the client that made the call.
 * Never arguments, output or an error's text: those can hold secrets, and the tool result already carries them
 * masked. A session that never called `logging/setLevel` gets none (and keeps its fast JSON answers).
 */
export function sessionLogger(
  threshold: string | undefined,
  notify: (n: { method: 'notifications/message'; params: Record<string, unknown> }) => Promise<void>,
): SendLog {
  return async (level, data) => {
    if (!passes(level, threshold)) return;
    await notify({ method: 'notifications/message', params: { level, logger: 'letkite', data } }).catch(
      () => undefined,
    );
  };
}

/** The level of a finished call's log message: refusals are warnings, failures of the gateway or machine errors. */
export function levelOfOutcome(outcome: string): LoggingLevel {
  if (outcome === 'ok' || outcome === 'approval_pending') return 'info';
  if (outcome === 'internal' || outcome === 'machine_offline' || outcome === 'timeout') return 'error';
  return 'warning';
}
