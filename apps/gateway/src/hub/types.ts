import type { RequestContext } from '@letkite/protocol';

export interface CallOptions {
  /** The call fails with `timeout` after this long without a response. */
  timeoutMs: number;
  /** Aborting sends `cancel` to the agent and rejects the call. */
  signal?: AbortSignal;
  /** Streamed output chunks, in order. */
  onChunk?: (stream: string, data: string, encoding: 'utf8' | 'base64') => void;
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
