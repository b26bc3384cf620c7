import type { CreditFrame, EntryEndFrame, EntryFrame, RequestContext, StreamEndFrame } from '@letkite/protocol';

/**
 * What an agent streams on a call besides output chunks (transfers; protocol ops-transfer.ts). A data frame comes
 * as received: `frame` is its fragments (the header in the first), `bytes` its payload's length.
 */
export type AgentStreamEvent =
  | { type: 'data'; bytes: number; frame: Buffer[] }
  | CreditFrame
  | EntryFrame
  | EntryEndFrame;

/** Frames the gateway can push to an agent on a running call (the id is filled in). */
export type PushedFrame =
  | Omit<CreditFrame, 'id'>
  | Omit<EntryFrame, 'id'>
  | Omit<EntryEndFrame, 'id'>
  | Omit<StreamEndFrame, 'id'>;

/** The gateway's side of a streamed call: push frames and data to the agent while the call runs. */
export interface StreamPush {
  frame(frame: PushedFrame): void;
  /** Sends a data frame received on another call, re-addressed in place (no copy); credit is the caller's job. */
  forward(frame: Buffer[]): void;
}

/** A call that streams both ways. */
export interface CallStream {
  /** Called once the request frame is sent, with the way to push to the agent on this call. */
  onOpen(push: StreamPush): void;
  /** The agent's stream frames for this call, in order. */
  onEvent(event: AgentStreamEvent): void;
}

export interface CallOptions {
  /** The call fails with `timeout` after this long without a response. */
  timeoutMs: number;
  /** Aborting sends `cancel` to the agent and rejects the call. */
  signal?: AbortSignal;
  /** Streamed output chunks, in order. */
  onChunk?: (stream: string, data: string, encoding: 'utf8' | 'base64') => void;
  /** For streamed calls (transfers): frames both ways while the call runs. */
  stream?: CallStream;
}

/**
 * Routes requests to the agent that holds a machine's socket. Embedded mode: the in-process LocalHub. Cluster
 * mode: a NATS-backed hub that forwards to the gateway holding the socket, behind this same interface.
 */
export interface AgentHub {
  isOnline(machineId: string): boolean;
  /** Sends one request to the machine's agent and resolves with its result (or rejects with a LetKiteError). */
  call(machineId: string, op: string, params: unknown, context: RequestContext, options: CallOptions): Promise<unknown>;
  /** Closes every agent socket (gateway shutdown). */
  close(): Promise<void>;
}
