import {
  type AgentFrame,
  type AgentOp,
  agentOps,
  isAgentOp,
  LetKiteError,
  type ParsedAgentOpParams,
  type RequestContext,
} from '@letkite/protocol';
import type { CeilingState } from '../ceiling/ceiling-source';
import { execCommand } from '../executors/exec-command';
import { type FileOpName, runFileOp } from '../executors/file-op';
import { parseParams } from '../files/parse-params';
import { GuiScreen } from '../gui/gui-screen';
import type { RequestStream } from '../request-stream';
import type { StatefulOps } from '../session-ops';
import { runTransferOp, type TempJournal, type TransferOpName } from '../transfers';
import { tunnelConnect } from '../tunnels';
import { sendChunks } from './send-chunks';
import { wakeSend } from './wake-send';

/** One request as a handler gets it: params already parsed against the op's schema in the protocol registry. */
export interface OpRequest<K extends AgentOp> {
  id: string;
  op: K;
  params: ParsedAgentOpParams<K>;
  context: RequestContext;
  /** The ceiling in force for this request (re-read when the file changed). */
  ceiling: CeilingState;
  /** Sends a frame on this request (chunks, stream records); the answer itself is the handler's return value. */
  send: (frame: AgentFrame) => void;
  signal: AbortSignal;
  stream: RequestStream;
}

/** Serves one op; its return value is the `response` frame's result. */
export type OpHandler<K extends AgentOp> = (request: OpRequest<K>) => Promise<unknown> | unknown;

/** A handler for every op of the registry: a new op in the protocol does not compile until it is handled here. */
export type OpHandlers = { readonly [K in AgentOp]: OpHandler<K> };

/** What the handlers need from the agent process. */
export interface OpDeps {
  stateful: StatefulOps;
  transfers: TempJournal;
  /** The screen tools' display (gui/display.ts); without one they answer `unsupported`. */
  screen?: GuiScreen;
}

/** A `chunks` op's output goes out as chunk frames on stdout and stderr before its result. */
function withOutput<T extends { stdout: string; stderr: string }>(
  request: { id: string; send: (frame: AgentFrame) => void },
  output: T,
): Omit<T, 'stdout' | 'stderr'> {
  const { stdout, stderr, ...result } = output;
  sendChunks(request.send, request.id, 'stdout', stdout);
  sendChunks(request.send, request.id, 'stderr', stderr);
  return result;
}

function fileOp<K extends FileOpName>(): OpHandler<K> {
  return (r) => runFileOp(r.op, r.params, r.context, r.ceiling);
}

function transferOp<K extends TransferOpName>(journal: TempJournal): OpHandler<K> {
  return (r) => {
    const side = { id: r.id, send: r.send, stream: r.stream, signal: r.signal };
    return runTransferOp(r.op, r.params, r.context, r.ceiling, side, journal);
  };
}

/** Every op the agent serves, by name. */
export function opHandlers({ stateful, transfers, screen }: OpDeps): OpHandlers {
  const gui = screen ?? new GuiScreen({ platform: process.platform, hostname: '' });
  return {
    exec: async (r) => withOutput(r, await execCommand(r.params, r.context, r.ceiling, r.signal)),
    shell_run: async (r) => withOutput(r, await stateful.sessions.run(r.params, r.context, r.ceiling, r.signal)),
    job_start: (r) => stateful.jobs.start(r.params, r.context, r.ceiling),
    job_status: (r) => stateful.jobs.status(r.params, r.context),
    job_output: (r) => stateful.jobs.output(r.params, r.context),
    job_stop: (r) => stateful.jobs.stop(r.params, r.context),
    terminal_open: (r) => stateful.terminals.open(r.params, r.context, r.ceiling),
    terminal_send: (r) => stateful.terminals.send(r.params, r.context, r.ceiling),
    terminal_read: (r) => stateful.terminals.read(r.params, r.context, r.ceiling),
    terminal_text: (r) => stateful.terminals.text(r.params, r.context, r.ceiling, r.signal),
    terminal_close: (r) => stateful.terminals.close(r.params, r.context, r.ceiling),
    read_file: fileOp(),
    list_dir: fileOp(),
    write_file: fileOp(),
    delete_path: fileOp(),
    git_status: fileOp(),
    git_diff: fileOp(),
    gui_observe: (r) => gui.observe(r.params, r.context, r.ceiling, r),
    gui_act: (r) => gui.act(r.params, r.context, r.ceiling, r.signal),
    transfer_send: transferOp(transfers),
    transfer_receive: transferOp(transfers),
    tunnel_connect: (r) =>
      tunnelConnect(r.params, r.context, r.ceiling, { id: r.id, send: r.send, stream: r.stream, signal: r.signal }),
    wake_send: (r) => wakeSend(r.params, r.context, r.ceiling),
  };
}

/** A request before dispatch: its op is whatever name the gateway sent. */
export type RawOpRequest = Omit<OpRequest<AgentOp>, 'op' | 'params'> & { op: string; params: unknown };

/**
 * Runs one request: an op this agent does not know is `unsupported`, and params that fail the op's schema are
 * `invalid_params` naming each bad field, before any handler sees them (fail closed: a compromised gateway gets
 * no further than the schema).
 */
export function dispatchOp(handlers: OpHandlers, request: RawOpRequest): Promise<unknown> {
  const { op } = request;
  if (!isAgentOp(op)) return Promise.reject(new LetKiteError('unsupported', `this agent does not support "${op}"`));
  return run(handlers, op, request);
}

async function run<K extends AgentOp>(handlers: OpHandlers, op: K, request: RawOpRequest): Promise<unknown> {
  const params = parseParams(agentOps[op].params, request.params) as ParsedAgentOpParams<K>;
  const handler = handlers[op] as OpHandler<K>;
  return handler({ ...request, op, params });
}
