import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobManager } from './jobs/job-manager';
import { SessionManager } from './shell-sessions/session-manager';
import { TerminalManager } from './terminals/terminal-manager';

/**
 * What keeps state on the agent between requests: shell sessions, background jobs and terminals (their ops are
 * dispatched by ops/index.ts).
 * Jobs live under `<stateDir>/jobs` (a private runtime directory when the agent has no state directory).
 */
export class StatefulOps {
  readonly sessions = new SessionManager();
  readonly jobs: JobManager;
  readonly terminals = new TerminalManager();

  constructor(stateDir: string | null, log: (msg: string) => void) {
    this.jobs = new JobManager(stateDir ?? join(tmpdir(), `letkite-agent-${process.getuid?.() ?? 0}`), log);
  }

  /** Agent shutdown: sessions and terminals end; running jobs end and are recorded as lost. */
  close(): void {
    this.sessions.close();
    this.terminals.closeAll();
    this.jobs.close();
  }
}
