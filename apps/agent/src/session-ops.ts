import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentFrame, RequestFrame } from '@letkite/protocol';
import type { CeilingState } from './ceiling/ceiling-source';
import { JobManager } from './jobs/job-manager';
import { SessionManager } from './shell-sessions/session-manager';
import { TerminalManager } from './terminals/terminal-manager';

/** Largest piece of output in one chunk frame (stays under the 1 MiB frame even when JSON-escaped). */
const CHUNK_CHARS = 100_000;

const ops = [
  'shell_run',
  'job_start',
  'job_status',
  'job_output',
  'job_stop',
  'terminal_open',
  'terminal_send',
  'terminal_read',
  'terminal_text',
  'terminal_close',
] as const;
type StatefulOp = (typeof ops)[number];

export function isStatefulOp(op: string): op is StatefulOp {
  return (ops as readonly string[]).includes(op);
}

function sendText(send: (f: AgentFrame) => void, id: string, stream: string, text: string): void {
  for (let i = 0; i < text.length; ) {
    let end = Math.min(text.length, i + CHUNK_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    send({ type: 'chunk', id, stream, data: text.slice(i, end) });
    i = end;
  }
}

/**
 * The operations that keep state on the agent between requests: shell sessions, background jobs and terminals.
 * Jobs live under `<stateDir>/jobs` (a private runtime directory when the agent has no state directory).
 */
export class StatefulOps {
  readonly sessions = new SessionManager();
  readonly jobs: JobManager;
  readonly terminals = new TerminalManager();

  constructor(stateDir: string | null, log: (msg: string) => void) {
    this.jobs = new JobManager(stateDir ?? join(tmpdir(), `letkite-agent-${process.getuid?.() ?? 0}`), log);
  }

  async run(
    frame: RequestFrame & { op: StatefulOp },
    ceiling: CeilingState,
    send: (f: AgentFrame) => void,
    signal: AbortSignal,
  ): Promise<unknown> {
    const { params, context } = frame;
    switch (frame.op) {
      case 'shell_run': {
        const { stdout, stderr, ...result } = await this.sessions.run(params, context, ceiling, signal);
        sendText(send, frame.id, 'stdout', stdout);
        sendText(send, frame.id, 'stderr', stderr);
        return result;
      }
      case 'job_start':
        return this.jobs.start(params, context, ceiling);
      case 'job_status':
        return this.jobs.status(params, context);
      case 'job_output':
        return this.jobs.output(params, context);
      case 'job_stop':
        return this.jobs.stop(params, context);
      case 'terminal_open':
        return this.terminals.open(params, context, ceiling);
      case 'terminal_send':
        return this.terminals.send(params, context, ceiling);
      case 'terminal_read':
        return this.terminals.read(params, context, ceiling);
      case 'terminal_text':
        return this.terminals.text(params, context, ceiling, signal);
      case 'terminal_close':
        return this.terminals.close(params, context, ceiling);
    }
  }

  /** Agent shutdown: sessions and terminals end; running jobs end and are recorded as lost. */
  close(): void {
    this.sessions.close();
    this.terminals.closeAll();
    this.jobs.close();
  }
}
