import { LetKiteError, type RequestContext, type ShellRunResult } from '@letkite/protocol';
import { ShellRunParams } from '@letkite/protocol/ops-shell';
import type { CeilingState } from '../ceiling/ceiling-source';
import { prepareLaunch } from '../executors/prepare-launch';
import { authorizeCommand, authorizeGatedTool, isAllowlist } from '../guard/authorize-command';
import { requestPolicy } from '../guard/request-policy';
import { SESSION_SHELL, ShellSession } from './shell-session';

/** A session nobody used for this long is ended. */
export const SESSION_IDLE_MS = 15 * 60_000;
/** At most this many sessions per machine (all callers together). */
export const MAX_SESSIONS = 8;
const START_TIMEOUT_MS = 15_000;

export interface SessionManagerOptions {
  idleMs?: number;
  maxSessions?: number;
}

/**
 * The agent's shell sessions. A session belongs to the caller that opened it (`context.actor`); anyone else gets
 * `not_found`, exactly as for an id that never existed. Every command is re-checked here (shell level, command
 * mode, command rules and ceiling) before it reaches the shell.
 */
export class SessionManager {
  private readonly sessions = new Map<string, ShellSession>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly idleMs: number;
  private readonly maxSessions: number;

  constructor(options: SessionManagerOptions = {}) {
    this.idleMs = options.idleMs ?? SESSION_IDLE_MS;
    this.maxSessions = options.maxSessions ?? MAX_SESSIONS;
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, this.idleMs));
    this.sweeper.unref();
  }

  async run(
    raw: unknown,
    context: RequestContext,
    ceiling: CeilingState,
    signal: AbortSignal,
  ): Promise<ShellRunResult & { stdout: string; stderr: string }> {
    const parsed = ShellRunParams.safeParse(raw);
    if (!parsed.success) throw new LetKiteError('invalid_params', 'malformed shell_run parameters');
    const params = parsed.data;
    const rp = requestPolicy(context.policy, ceiling);
    if (isAllowlist(rp.clamped)) {
      throw new LetKiteError('unsupported', 'shell sessions do not exist in allowlist mode', { layer: 'allowlist' });
    }
    authorizeGatedTool(rp, 'shell_run', context);
    authorizeCommand(rp, params.command, context);
    const owner = context.actor ?? '';
    let session: ShellSession;
    if (params.session_id !== undefined) {
      const found = this.sessions.get(params.session_id);
      if (!found || found.owner !== owner || found.ended) {
        if (found?.ended) this.sessions.delete(found.id);
        throw new LetKiteError('not_found', `no shell session "${params.session_id}" (it may have idled out)`);
      }
      if (found.busy) throw new LetKiteError('rate_limited', 'the session is still running a command; retry later');
      session = found;
    } else {
      this.sweep();
      if (this.sessions.size >= this.maxSessions) {
        throw new LetKiteError('rate_limited', `this machine already has ${this.maxSessions} shell sessions`, {
          max: this.maxSessions,
        });
      }
      const launch = await prepareLaunch(rp, SESSION_SHELL, {});
      session = new ShellSession(owner, launch);
      this.sessions.set(session.id, session);
      try {
        await session.start(START_TIMEOUT_MS);
      } catch (err) {
        this.sessions.delete(session.id);
        throw err;
      }
    }
    const r = await session.run(params.command, {
      timeoutMs: params.timeout_ms,
      maxOutputBytes: params.max_output_bytes,
      signal,
    });
    if (r.sessionEnded) this.sessions.delete(session.id);
    return {
      session_id: session.id,
      exit_code: r.exitCode,
      cwd: r.cwd,
      stdout: r.stdout,
      stderr: r.stderr,
      truncated: r.truncated,
      timed_out: r.timedOut,
      session_ended: r.sessionEnded,
      duration_ms: r.durationMs,
    };
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Ends every session (agent shutdown). */
  close(): void {
    clearInterval(this.sweeper);
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
  }

  private sweep(now = Date.now()): void {
    for (const [id, s] of this.sessions) {
      if (s.ended || (!s.busy && now - s.lastUsed > this.idleMs)) {
        s.close();
        this.sessions.delete(id);
      }
    }
  }
}
