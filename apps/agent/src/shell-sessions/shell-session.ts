import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { LetKiteError } from '@letkite/protocol';
import type { PreparedLaunch } from '../executors/prepare-launch';
import { decodeTail, TailBuffer } from '../executors/tail-buffer';
import { sandboxRefusal } from '../sandbox';
import {
  commandLine,
  MarkerScanner,
  markers,
  parseStatusTrailer,
  SESSION_PRELUDE,
  type SessionStatus,
} from './sentinel';

/** What one command in a session produced. */
export interface SessionRunResult {
  exitCode: number | null;
  cwd: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
  sessionEnded: boolean;
  durationMs: number;
}

/** The bash a session runs: no profile or rc files, so only what the commands themselves define persists. */
export const SESSION_SHELL = ['/bin/bash', '--noprofile', '--norc'];

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * One persistent bash process (its own process group) fed commands on stdin by the sentinel protocol
 * (sentinel.ts). Runs one command at a time. A command that times out or is cancelled ends the whole session:
 * without job control there is no way to stop only the command and keep the shell's state trustworthy.
 */
export class ShellSession {
  readonly id = `sh_${randomBytes(16).toString('base64url')}`;
  lastUsed = Date.now();
  busy = false;
  private readonly child: ChildProcessWithoutNullStreams;
  private exited: { code: number | null } | null = null;
  private readonly exitWaiters: (() => void)[] = [];
  private stderrSinceStart = '';
  private onStdout: ((c: Buffer) => void) | null = null;
  private onStderr: ((c: Buffer) => void) | null = null;

  constructor(
    readonly owner: string,
    private readonly launch: PreparedLaunch,
  ) {
    const { plan, cwd } = launch;
    this.child = spawn(plan.file, plan.args, {
      cwd,
      env: plan.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(plan.uid === undefined ? {} : { uid: plan.uid }),
      ...(plan.gid === undefined ? {} : { gid: plan.gid }),
    });
    this.child.stdin.on('error', () => {});
    this.child.stdout.on('data', (c: Buffer) => this.onStdout?.(c));
    this.child.stderr.on('data', (c: Buffer) => {
      if (this.stderrSinceStart.length < 4096) this.stderrSinceStart += c.toString('utf8');
      this.onStderr?.(c);
    });
    this.child.on('error', () => this.markExited(127));
    this.child.on('close', (code) => this.markExited(code));
  }

  get ended(): boolean {
    return this.exited !== null;
  }

  /** Defines the sentinel function and proves the shell answers; a sandbox refusal becomes `unsupported`. */
  async start(timeoutMs: number): Promise<void> {
    this.child.stdin.write(SESSION_PRELUDE);
    const r = await this.run(':', { timeoutMs, maxOutputBytes: 64 * 1024 });
    if (r.exitCode !== 0 || r.sessionEnded) {
      this.close();
      const refusal = sandboxRefusal(this.exited?.code ?? null, this.stderrSinceStart);
      if (refusal) throw refusal;
      throw new LetKiteError('internal', 'the session shell did not start');
    }
  }

  /** Runs one command; resolves when its sentinel arrives, the shell exits, the time runs out or `signal` aborts. */
  run(
    command: string,
    options: { timeoutMs: number; maxOutputBytes: number; signal?: AbortSignal },
  ): Promise<SessionRunResult> {
    if (this.exited) throw new LetKiteError('not_found', 'the shell session has ended');
    const started = performance.now();
    const nonce = randomBytes(16).toString('hex');
    const mark = markers(nonce);
    const stdout = new TailBuffer(options.maxOutputBytes);
    const stderr = new TailBuffer(options.maxOutputBytes);
    let status: SessionStatus | null = null;
    const outScanner = new MarkerScanner(
      mark.stdout,
      (c) => stdout.write(Buffer.from(c)),
      (rest) => {
        const parsed = parseStatusTrailer(rest);
        if (!parsed) return -1;
        status = parsed.status;
        return parsed.consumed;
      },
    );
    const errScanner = new MarkerScanner(mark.stderr, (c) => stderr.write(Buffer.from(c)));
    this.busy = true;
    return new Promise<SessionRunResult>((resolve) => {
      let timedOut = false;
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const at = this.exitWaiters.indexOf(onExit);
        if (at >= 0) this.exitWaiters.splice(at, 1);
        options.signal?.removeEventListener('abort', onAbort);
        this.onStdout = null;
        this.onStderr = null;
        this.busy = false;
        this.lastUsed = Date.now();
        const s = status as SessionStatus | null;
        resolve({
          exitCode: s ? s.exitCode : this.exited && !timedOut ? this.exited.code : null,
          cwd: s ? s.cwd : null,
          stdout: decodeTail(stdout.toBuffer(), stdout.truncated),
          stderr: decodeTail(stderr.toBuffer(), stderr.truncated),
          truncated: stdout.truncated || stderr.truncated,
          timedOut,
          sessionEnded: this.exited !== null,
          durationMs: Math.round(performance.now() - started),
        });
      };
      const check = () => {
        if (outScanner.complete && errScanner.complete) finish();
      };
      this.onStdout = (c) => {
        outScanner.push(c);
        check();
      };
      this.onStderr = (c) => {
        errScanner.push(c);
        check();
      };
      const endSession = () => {
        this.close();
        this.waitExit().then(finish, finish);
      };
      const timer = setTimeout(() => {
        timedOut = true;
        endSession();
      }, options.timeoutMs);
      const onAbort = () => endSession();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const onExit = () => finish();
      this.exitWaiters.push(onExit);
      this.child.stdin.write(commandLine(command, nonce));
    });
  }

  /** Kills the shell and everything it started. */
  close(): void {
    killGroup(this.child.pid);
    if (!this.exited) this.child.stdin.destroy();
  }

  private waitExit(): Promise<void> {
    if (this.exited) return Promise.resolve();
    return new Promise((resolve) => this.exitWaiters.push(resolve));
  }

  private markExited(code: number | null): void {
    if (this.exited) return;
    this.exited = { code };
    // Whatever the shell left running in its group goes with it.
    killGroup(this.child.pid);
    this.launch.release();
    for (const w of this.exitWaiters.splice(0)) w();
  }
}
