import { type AgentOpParams, exec } from '@letkite/protocol';
import type { z } from 'zod';
import { judgeAndGate } from '../../commands/judge-and-gate';
import { runCommand } from '../../commands/run-command';
import { defineHandler } from '../tool-handler';

/** The agent keeps at most this much of each stream (newest kept) before the gateway caps it for the AI. */
const AGENT_OUTPUT_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_S = 60;
/** On top of the command's own timeout (the agent enforces that one): guards against an agent that never answers. */
const AGENT_SILENCE_MS = 15_000;

type ExecInput = z.infer<typeof exec.input>;
/** What exec runs on one machine: the exec input without the machine. */
export type ExecCommand = Omit<ExecInput, 'machine'>;

/** The exec request the agent gets for this input (also exactly what an approval of it binds). */
export function execAgentParams(input: ExecCommand): AgentOpParams<'exec'> {
  return {
    command: input.command,
    argv: input.argv,
    cwd: input.cwd,
    env: input.env,
    stdin: input.stdin,
    timeout_ms: (input.timeout_s ?? DEFAULT_TIMEOUT_S) * 1000,
    max_output_bytes: AGENT_OUTPUT_BYTES,
  };
}

/** How long the gateway waits for an exec's answer. */
export function execWaitMs(input: ExecCommand): number {
  return (input.timeout_s ?? DEFAULT_TIMEOUT_S) * 1000 + AGENT_SILENCE_MS;
}

/** The command request judged for this input ("exactly one of command or argv" is the schema's). */
export function execRequest(input: ExecCommand) {
  return {
    command: input.command ?? input.argv ?? [],
    cwd: input.cwd,
    env: input.env,
    stdin: input.stdin,
    confirm: input.confirm ?? false,
  };
}

/** `exec`: judged and gated by the gateway (then again by the agent), run, its output masked and capped. */
export const execHandler = defineHandler(exec, async (input, ctx) => {
  ctx.audit.details = input.command !== undefined ? { command: input.command } : { argv: input.argv };
  const { machine: ref, ...command } = input;
  const params = execAgentParams(command);
  const call = await judgeAndGate(ctx, ref, execRequest(command), { tool: 'exec', args: input, params });
  return runCommand(ctx, call, 'exec', params, {
    confirm: command.confirm ?? false,
    approved: call.approved,
    timeoutMs: execWaitMs(command),
  });
});
