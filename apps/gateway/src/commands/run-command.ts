import type { AgentOpParams, AgentOpResult } from '@letkite/protocol';
import type { MachineCall } from '../machines/prepare-machine-call';
import type { ToolCallContext } from '../mcp/tool-handler';
import { outputMaskerFor } from '../mcp/tool-handler';

/** The ops that stream a command's stdout and stderr as chunks before their result. */
export type ChunkedCommandOp = 'exec' | 'shell_run';

/** A command's result with its streams as the AI gets them: masked and capped. */
export type CommandOutput<K extends ChunkedCommandOp> = AgentOpResult<K> & {
  stdout: string;
  stderr: string;
  truncated: boolean;
  masked_count: number;
};

/**
 * Runs a judged (and, when needed, approved) command on its machine and gathers its output: the agent streams
 * stdout and stderr as chunks, the gateway masks each stream (known token formats, private keys, the account's
 * redaction patterns) and caps it (newest kept) before any AI reads it. `timeoutMs` guards against an agent that
 * never answers; the command's own timeout is the agent's to enforce.
 */
export async function runCommand<K extends ChunkedCommandOp>(
  ctx: ToolCallContext,
  call: MachineCall,
  op: K,
  params: AgentOpParams<K>,
  options: { confirm: boolean; approved: boolean; timeoutMs: number },
): Promise<CommandOutput<K>> {
  const out: Record<'stdout' | 'stderr', string[]> = { stdout: [], stderr: [] };
  const result = await call.call(op, params, {
    confirm: options.confirm,
    approved: options.approved,
    timeoutMs: options.timeoutMs,
    onChunk: (stream, data) => {
      if (stream === 'stdout' || stream === 'stderr') out[stream].push(data);
    },
  });
  const masker = await outputMaskerFor(ctx);
  const stdout = masker.prepare(out.stdout.join(''));
  const stderr = masker.prepare(out.stderr.join(''));
  return {
    ...result,
    stdout: stdout.text,
    stderr: stderr.text,
    truncated: result.truncated || stdout.truncated || stderr.truncated,
    masked_count: stdout.masked_count + stderr.masked_count,
  };
}
