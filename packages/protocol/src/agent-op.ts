import type { z } from 'zod';

/**
 * How an op talks besides its one answer. `call`: request, then `response` or `error`. `chunks`: output arrives
 * first as `chunk` frames (stdout, stderr). `stream`: a two-way stream of records, binary data frames and credit
 * while the call runs (transfers; ops-transfer.ts), so the hub exposes it through `stream`, not `call`.
 */
export type AgentOpShape = 'call' | 'chunks' | 'stream';

/** One op of the registry: the schema its params must pass on the agent and the schema its result must pass on the gateway. */
export interface AgentOpSpec<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  params: P;
  result: R;
  shape: AgentOpShape;
}

/**
 * One op's entry in its module's registry (`execOps` in ops.ts, `fileOps` in ops-files.ts, …; agent-ops.ts joins
 * them). Each op module keeps its own registry so the agent can load one group of ops, schemas included, on its
 * first request (apps/agent/src/ops/features.ts).
 */
export function agentOp<P extends z.ZodType, R extends z.ZodType, S extends AgentOpShape>(
  params: P,
  result: R,
  shape: S,
): { params: P; result: R; shape: S } {
  return { params, result, shape };
}
