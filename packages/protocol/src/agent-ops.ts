import type { z } from 'zod';
import { ExecParams, ExecResult } from './ops';
import {
  DeletePathParams,
  DeletePathResult,
  GitDiffParams,
  GitDiffResult,
  GitStatusParams,
  GitStatusResult,
  ListDirParams,
  ListDirResult,
  ReadFileWindowParams,
  ReadFileWindowResult,
  WriteFileParams,
  WriteFileResult,
} from './ops-files';
import { GuiActParams, GuiActResult, GuiObserveParams, GuiObserveResult } from './ops-gui';
import { JobInfo, JobOutputParams, JobOutputResult, JobRef, JobStartParams } from './ops-jobs';
import { ShellRunParams, ShellRunResult } from './ops-shell';
import {
  TerminalCloseResult,
  TerminalInfo,
  TerminalOpenParams,
  TerminalReadParams,
  TerminalReadResult,
  TerminalRef,
  TerminalSendParams,
  TerminalSendResult,
  TerminalTextParams,
  TerminalTextResult,
} from './ops-terminals';
import { TransferReceiveParams, TransferSendParams, TransferSideResult } from './ops-transfer';
import { TunnelConnectParams, TunnelConnectResult } from './ops-tunnel';
import { WakeSendParams, WakeSendResult } from './ops-wake';

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

function op<P extends z.ZodType, R extends z.ZodType, S extends AgentOpShape>(
  params: P,
  result: R,
  shape: S,
): { params: P; result: R; shape: S } {
  return { params, result, shape };
}

/**
 * Every operation an agent performs, by its wire name (the `op` of a request frame): the single source the gateway's
 * hub types its calls and validates results against, and the agent dispatches on and validates params against.
 * Adding an op here does not compile until the agent's dispatcher (apps/agent/src/ops) handles it.
 */
export const agentOps = {
  exec: op(ExecParams, ExecResult, 'chunks'),
  shell_run: op(ShellRunParams, ShellRunResult, 'chunks'),
  job_start: op(JobStartParams, JobInfo, 'call'),
  job_status: op(JobRef, JobInfo, 'call'),
  job_output: op(JobOutputParams, JobOutputResult, 'call'),
  job_stop: op(JobRef, JobInfo, 'call'),
  terminal_open: op(TerminalOpenParams, TerminalInfo, 'call'),
  terminal_send: op(TerminalSendParams, TerminalSendResult, 'call'),
  terminal_read: op(TerminalReadParams, TerminalReadResult, 'call'),
  terminal_text: op(TerminalTextParams, TerminalTextResult, 'call'),
  terminal_close: op(TerminalRef, TerminalCloseResult, 'call'),
  read_file: op(ReadFileWindowParams, ReadFileWindowResult, 'call'),
  list_dir: op(ListDirParams, ListDirResult, 'call'),
  write_file: op(WriteFileParams, WriteFileResult, 'call'),
  delete_path: op(DeletePathParams, DeletePathResult, 'call'),
  git_status: op(GitStatusParams, GitStatusResult, 'call'),
  git_diff: op(GitDiffParams, GitDiffResult, 'call'),
  gui_observe: op(GuiObserveParams, GuiObserveResult, 'chunks'),
  gui_act: op(GuiActParams, GuiActResult, 'call'),
  transfer_send: op(TransferSendParams, TransferSideResult, 'stream'),
  transfer_receive: op(TransferReceiveParams, TransferSideResult, 'stream'),
  tunnel_connect: op(TunnelConnectParams, TunnelConnectResult, 'stream'),
  wake_send: op(WakeSendParams, WakeSendResult, 'call'),
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
