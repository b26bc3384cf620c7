import type { AgentFrame, AgentOp, agentOps, ParsedAgentOpParams, RequestContext } from '@letkite/protocol';
import type { CeilingState } from '../ceiling/ceiling-source';
import type { ScreenConfig } from '../gui/display';
import type { RequestStream } from '../request-stream';
import type { TempJournal } from '../transfers/temp-journal';

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

/**
 * A group of ops the agent loads on its first request (features.ts): the ops' schemas from their protocol module,
 * a handler for each, and what the group keeps running (sessions, jobs, terminals, file workers) to end at shutdown.
 */
export interface Feature<K extends AgentOp> {
  /** The protocol module's registry for these ops (`fileOps`, `guiOps`, …): params are parsed against it. */
  readonly schemas: { readonly [O in K]: (typeof agentOps)[O] };
  readonly handlers: { readonly [O in K]: OpHandler<O> };
  /** Agent shutdown. */
  close?(): void;
}

/** What the features need from the agent process. */
export interface FeatureDeps {
  /** The agent's state directory (jobs live under it); null: a private runtime directory. */
  stateDir: string | null;
  log: (msg: string) => void;
  /** Unfinished transfers' temporary files (the agent cleans the stale ones at start). */
  transfers: TempJournal;
  /** The screen tools' display (gui/display.ts); without one they answer `unsupported`. */
  screen?: ScreenConfig;
}
