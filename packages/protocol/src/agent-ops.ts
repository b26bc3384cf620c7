import type { z } from 'zod';
import type { AgentOpSpec } from './agent-op';
import { execOps } from './ops';
import { fileOps } from './ops-files';
import { guiOps } from './ops-gui';
import { jobOps } from './ops-jobs';
import { shellOps } from './ops-shell';
import { terminalOps } from './ops-terminals';
import { transferOps } from './ops-transfer';
import { tunnelOps } from './ops-tunnel';
import { wakeOps } from './ops-wake';

export { type AgentOpShape, type AgentOpSpec, agentOp } from './agent-op';

/**
 * Every operation an agent performs, by its wire name (the `op` of a request frame): the single source the gateway's
 * hub types its calls and validates results against, and the agent dispatches on and validates params against.
 * Each op module holds its own group (`execOps`, `fileOps`, …) so the agent can load a group on its first request
 * instead of building every schema at start (apps/agent/src/ops/features.ts); this registry joins them, in order.
 * Adding an op to a group does not compile until the agent's feature for that group (apps/agent/src/ops) handles it.
 */
export const agentOps = {
  ...execOps,
  ...shellOps,
  ...jobOps,
  ...terminalOps,
  ...fileOps,
  ...guiOps,
  ...transferOps,
  ...tunnelOps,
  ...wakeOps,
} as const satisfies Record<string, AgentOpSpec>;

type Registry = typeof agentOps;

/** The name of an agent operation. */
export type AgentOp = keyof Registry;

/** Every op name, in registry order. */
export const agentOpNames = Object.keys(agentOps) as AgentOp[];

/** The ops answered with one result (`call` and `chunks`): what `AgentHub.call` takes. */
export type AgentCallOp = { [K in AgentOp]: Registry[K]['shape'] extends 'stream' ? never : K }[AgentOp];

/** The two-way streamed ops: what `AgentHub.stream` takes. */
export type AgentStreamOp = Exclude<AgentOp, AgentCallOp>;

/** Params as the gateway sends them (defaults may be left out: the agent fills them in when it parses). */
export type AgentOpParams<K extends AgentOp> = z.input<Registry[K]['params']>;

/** Params as the agent's handler gets them, after parsing (defaults filled in). */
export type ParsedAgentOpParams<K extends AgentOp> = z.output<Registry[K]['params']>;

/** The op's result once the gateway has validated it. */
export type AgentOpResult<K extends AgentOp> = z.output<Registry[K]['result']>;

/** Whether a wire name is a known op (an unknown one is `unsupported` on the agent). */
export function isAgentOp(name: string): name is AgentOp {
  return Object.hasOwn(agentOps, name);
}
