import { shellRun } from '@letkite/protocol';
import { judgeAndGate } from '../../commands/judge-and-gate';
import { runCommand } from '../../commands/run-command';
import { defineHandler, outputMaskerFor } from '../tool-handler';

const AGENT_OUTPUT_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_S = 60;
/** Starting a session (and, sandboxed, probing the sandbox) may take this long on top of the command. */
const SESSION_START_MS = 20_000;

/** `shell_run`: judged and gated like exec on both sides, then run in the caller's persistent session on the agent. */
export const shellRunHandler = defineHandler(shellRun, async (input, ctx) => {
  ctx.audit.details = { command: input.command, ...(input.session_id ? { session_id: input.session_id } : {}) };
  const timeoutS = input.timeout_s ?? DEFAULT_TIMEOUT_S;
  const params = {
    session_id: input.session_id,
    command: input.command,
    timeout_ms: timeoutS * 1000,
    max_output_bytes: AGENT_OUTPUT_BYTES,
  };
  const request = { command: input.command, confirm: input.confirm ?? false, needsShell: 'shell sessions' };
  const m = await judgeAndGate(ctx, input.machine, request, { tool: 'shell_run', args: input, params });
  const result = await runCommand(ctx, m, 'shell_run', params, {
    confirm: input.confirm ?? false,
    approved: m.approved,
    timeoutMs: timeoutS * 1000 + SESSION_START_MS,
  });
  // The session's id in the audit row: how letkite://shell-sessions finds this connection's sessions.
  ctx.audit.details = { ...ctx.audit.details, session_id: result.session_id };
  // The prompt's directory is set by whatever ran in the session: masked like any other output.
  const masker = await outputMaskerFor(ctx);
  const cwd = result.cwd === null ? null : masker.prepare(result.cwd, { maxLines: 1, maxChars: 4096 }).text;
  return { ...result, cwd };
});
