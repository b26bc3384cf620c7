import type {
  AgentCallOp,
  AgentOpParams,
  AgentOpResult,
  AgentStreamOp,
  CreditFrame,
  EntryEndFrame,
  EntryFrame,
  RequestContext,
  StreamEndFrame,
} from '@letkite/protocol';

/**
 * A binary data frame of a streamed call, as bytes: the encoded frame (data-frame.ts: the 66-byte header, then the
 * payload) in one or more pieces, the header wholly in the first. Plain bytes, so a wire between gateways carries
 * it as their concatenation. In-process the pieces are views of what the socket read; pushing the event on hands
 * them over (LocalHub re-addresses the header in place and sends the same pieces: no copy).
 */
export interface DataEvent {
  type: 'data';
  /** Payload bytes (the frame without its header): what the frame costs in credit. */
  bytes: number;
  frame: readonly Uint8Array[];
}

/** What an agent streams on a streamed call besides its answer (transfers; protocol ops-transfer.ts). */
export type AgentStreamEvent = DataEvent | Omit<CreditFrame, 'id'> | Omit<EntryFrame, 'id'> | Omit<EntryEndFrame, 'id'>;

/** What the gateway can push to an agent on a streamed call. */
export type PushedStreamEvent = AgentStreamEvent | Omit<StreamEndFrame, 'id'>;

export interface CallOptions {
  /** The call fails with `timeout` after this long without a response. */
  timeoutMs: number;
  /** Aborting sends `cancel` to the agent and rejects the call. */
  signal?: AbortSignal;
  /**
   * For ops of shape `chunks` (exec, shell_run): each output chunk, in order, before the result. Runs on the calling
   * gateway whichever gateway holds the socket (a cluster hub delivers the chunks it is sent).
   */
  onChunk?: (stream: string, data: string, encoding: 'utf8' | 'base64') => void;
}

/** Options of a streamed call: no chunks, the stream carries everything. */
export type StreamOptions = Omit<CallOptions, 'onChunk'>;

/** A streamed call while it runs: the agent's events one way, pushed events the other, one validated result. */
export interface AgentStream<K extends AgentStreamOp> {
  /**
   * The agent's events, in order. Ends once the call has settled and every event sent before its answer has been
   * read, so a consumer that has read to the end has seen the whole stream. Read it once.
   */
  readonly events: AsyncIterable<AgentStreamEvent>;
  /** Sends one event to the agent on this call; dropped once the call has settled. */
  push(event: PushedStreamEvent): void;
  /** The op's result, validated against the registry (rejects with a LetKiteError). */
  readonly result: Promise<AgentOpResult<K>>;
}

/**
 * Routes requests to the agent that holds a machine's socket. Embedded mode: the in-process LocalHub. Cluster mode:
 * a hub that forwards to the gateway holding the socket, behind this same interface. Every op and its types come
 * from the protocol's registry (`agentOps`); the hub validates each result against it once, so callers get typed
 * values. Everything that crosses the interface is data (params, results, chunks, stream events, bytes), so it can
 * cross a wire between gateways.
 */
export interface AgentHub {
  /** Which of these machines hold a socket on some gateway now (one round trip for the whole list). */
  online(machineIds: readonly string[]): Promise<ReadonlySet<string>>;
  /** Sends one request to the machine's agent and resolves with its validated result (or rejects with a LetKiteError). */
  call<K extends AgentCallOp>(
    machineId: string,
    op: K,
    params: AgentOpParams<K>,
    context: RequestContext,
    options: CallOptions,
  ): Promise<AgentOpResult<K>>;
  /** Starts a streamed call (transfers): events both ways while it runs. An offline machine rejects `result`. */
  stream<K extends AgentStreamOp>(
    machineId: string,
    op: K,
    params: AgentOpParams<K>,
    context: RequestContext,
    options: StreamOptions,
  ): AgentStream<K>;
  /** Closes every agent socket this gateway holds (gateway shutdown). */
  close(): Promise<void>;
}
