import { type AgentFrame, ExecParams, LetKiteError, type RequestFrame, toLetKiteError } from '@letkite/protocol';
import { GatewayConnection } from './connection';
import { runExec } from './executors/exec';
import { buildLaunchPlan } from './launch-plan';
import type { AgentState } from './state';

/** Largest piece of output in one chunk frame: 100k UTF-16 units stay under the 1 MiB frame even when escaped. */
const CHUNK_CHARS = 100_000;

export interface AgentOptions {
  log?: (msg: string) => void;
}

function sendText(send: (f: AgentFrame) => void, id: string, stream: string, text: string): void {
  for (let i = 0; i < text.length; i += CHUNK_CHARS) {
    let end = Math.min(text.length, i + CHUNK_CHARS);
    // Never split a surrogate pair across frames.
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    send({ type: 'chunk', id, stream, data: text.slice(i, end) });
    i = end - CHUNK_CHARS;
  }
}

/** The agent process: one connection to the gateway and the operations it serves. */
export class Agent {
  readonly connection: GatewayConnection;
  private readonly log: (msg: string) => void;

  constructor(state: AgentState, options: AgentOptions = {}) {
    this.log = options.log ?? ((msg) => console.error(`[agent] ${msg}`));
    this.connection = new GatewayConnection(state, {
      log: this.log,
      onConnected: () => {},
      onRequest: (frame, send, signal) => this.handle(frame, send, signal),
    });
  }

  start(): void {
    this.connection.start();
  }

  stop(): Promise<void> {
    return this.connection.stop();
  }

  private async handle(frame: RequestFrame, send: (f: AgentFrame) => void, signal: AbortSignal): Promise<void> {
    try {
      const result = await this.run(frame, send, signal);
      send({ type: 'response', id: frame.id, result });
    } catch (err) {
      const e = toLetKiteError(err);
      if (!(err instanceof LetKiteError)) this.log(`request ${frame.id} (${frame.op}) failed: ${String(err)}`);
      else this.log(`refused ${frame.op} (${frame.context.actor ?? 'unknown'}): ${e.code}: ${e.message}`);
      send({ type: 'error', id: frame.id, error: e.toPayload() });
    }
  }

  private async run(frame: RequestFrame, send: (f: AgentFrame) => void, signal: AbortSignal): Promise<unknown> {
    switch (frame.op) {
      case 'exec': {
        const parsed = ExecParams.safeParse(frame.params);
        if (!parsed.success) throw new LetKiteError('invalid_params', 'malformed exec parameters');
        const params = parsed.data;
        if ((params.command === undefined) === (params.argv === undefined)) {
          throw new LetKiteError('invalid_params', 'give exactly one of "command" or "argv"');
        }
        const { stdout, stderr, ...result } = await runExec(params, buildLaunchPlan(params), signal);
        sendText(send, frame.id, 'stdout', stdout);
        sendText(send, frame.id, 'stderr', stderr);
        return result;
      }
      default:
        throw new LetKiteError('unsupported', `this agent does not support "${frame.op}"`);
    }
  }
}
