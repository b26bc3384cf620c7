import { ExecResult, exec, LetKiteError } from '@letkite/protocol';
import { resolveMachine } from '../../machines/resolve-machine';
import { defineHandler } from '../tool-handler';

/** The agent keeps at most this much of each stream (newest kept) before the gateway caps it for the AI. */
const AGENT_OUTPUT_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_S = 60;

export const execHandler = defineHandler(exec, async (input, ctx) => {
  if ((input.command === undefined) === (input.argv === undefined)) {
    throw new LetKiteError('invalid_params', 'give exactly one of "command" or "argv"');
  }
  const machine = await resolveMachine(ctx.deps.store, ctx.principal, input.machine);
  ctx.audit.target = machine.id;
  ctx.audit.details = input.command !== undefined ? { command: input.command } : { argv: input.argv };
  if (!ctx.deps.hub.isOnline(machine.id))
    throw new LetKiteError('machine_offline', `machine "${machine.name}" is offline`);
  ctx.audit.decision = 'allow';

  const timeoutS = input.timeout_s ?? DEFAULT_TIMEOUT_S;
  const out: Record<'stdout' | 'stderr', string[]> = { stdout: [], stderr: [] };
  const raw = await ctx.deps.hub.call(
    machine.id,
    'exec',
    {
      command: input.command,
      argv: input.argv,
      cwd: input.cwd,
      env: input.env,
      stdin: input.stdin,
      timeout_ms: timeoutS * 1000,
      max_output_bytes: AGENT_OUTPUT_BYTES,
    },
    { policy: ctx.principal.grant.policy, confirm: input.confirm ?? false, actor: ctx.principal.actor },
    {
      // The agent enforces the command's own timeout; this one only guards against an agent that never answers.
      timeoutMs: timeoutS * 1000 + 15_000,
      signal: ctx.signal,
      onChunk: (stream, data) => {
        if (stream === 'stdout' || stream === 'stderr') out[stream].push(data);
      },
    },
  );
  const result = ExecResult.parse(raw);
  return { ...result, stdout: out.stdout.join(''), stderr: out.stderr.join(''), masked_count: 0 };
});
