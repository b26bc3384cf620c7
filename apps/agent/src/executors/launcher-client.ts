import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TRUSTED_PATH } from '../launch-plan';

/** The launcher's environment: the trusted PATH and nothing else (issue #10 item 1). */
export function launcherEnv(): Record<string, string> {
  return { PATH: TRUSTED_PATH };
}

/** One command to start: the launch plan plus what runExec feeds it. */
export interface LaunchRequest {
  file: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  uid?: number;
  gid?: number;
  extraFds: (string | null)[];
  stdin: string | undefined;
  /** Each output stream keeps its newest this many bytes. */
  max: number;
}

/** A finished command's output, each stream already cut to its newest `max` bytes. */
export interface LaunchOutput {
  stdout: Buffer;
  stderr: Buffer;
  stdoutCut: boolean;
  stderrCut: boolean;
}

/** What happens to a launched command, in this order: pid (unless the spawn failed), error?, exit?, close. */
export interface LaunchEvents {
  pid(pid: number): void;
  /** The program could not be started (ENOENT, EACCES, a missing cwd …); `close` follows. */
  error(code: string | undefined): void;
  exit(code: number | null, sig: string | null): void;
  close(code: number | null, sig: string | null, output: LaunchOutput): void;
  /** spawn() threw, or the launcher died: no further events. */
  fail(err: Error): void;
}

/** Starts a command; events are delivered through `events`, possibly synchronously. */
export type Launch = (req: LaunchRequest, events: LaunchEvents) => void;

type FromLauncher =
  | { t: 'ready' }
  | { t: 'pid'; id: number; pid: number }
  | { t: 'throw'; id: number; name?: string; message: string; code?: string }
  | { t: 'error'; id: number; code?: string }
  | { t: 'exit'; id: number; code: number | null; sig: string | null }
  | ({ t: 'close'; id: number; code: number | null; sig: string | null } & LaunchOutput);

/** How long the launcher may take to start before calls fall back to spawning in the agent. */
const READY_TIMEOUT_MS = 10_000;
/** After the launcher failed to start, calls spawn in-process this long before another start is tried. */
const RETRY_AFTER_MS = 30_000;
/** The launcher exits after this long without a command in flight (issue #13: its ≈ 42 MiB RSS while idle). */
export const DEFAULT_IDLE_MS = 60_000;

/** `LETKITE_EXEC_LAUNCHER_IDLE_MS`: the idle time before the launcher exits; 0 keeps it for good. */
export function idleFromEnv(value = process.env.LETKITE_EXEC_LAUNCHER_IDLE_MS): number {
  if (value === undefined || value.trim() === '') return DEFAULT_IDLE_MS;
  const ms = Number(value);
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : DEFAULT_IDLE_MS;
}

/** The structured clone of a Buffer may arrive as a plain Uint8Array: view it as a Buffer without copying. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function launcherPath(): string {
  return fileURLToPath(new URL('./launcher.mjs', import.meta.url));
}

/**
 * The agent's side of launcher.mjs: starts it (plain `node`, no tsx, a fixed environment), routes its replies to the
 * commands in flight, and keeps it from holding the agent's event loop open while idle. If it dies, the process
 * groups of the commands in flight are killed and those commands fail; the next command starts a new launcher.
 *
 * After `idleMs` without a command in flight it is retired: detached first (so no new command can be sent to it),
 * then its channel is closed, on which it exits. A command that arrives meanwhile starts a fresh launcher; a Launch
 * obtained before the retirement sends to the fresh one too. Nothing is in flight on a retired launcher, so
 * nothing is lost with it.
 */
export class LauncherClient {
  private child: ChildProcess | null = null;
  private ready: Promise<boolean> | null = null;
  private failedAt = Number.NEGATIVE_INFINITY;
  private nextId = 1;
  private readonly inFlight = new Map<number, { events: LaunchEvents; pid?: number }>();
  /** Launchers detached for being idle: a Launch bound to one goes to the current launcher instead. */
  private readonly retired = new WeakSet<ChildProcess>();
  /** acquire() calls waiting for a start: the launcher is not retired under them. */
  private acquiring = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly path = launcherPath(),
    private readonly log: (msg: string) => void = (msg) => console.error(`[agent] ${msg}`),
    private readonly idleMs = idleFromEnv(),
  ) {}

  /** A launch through the launcher, or null when it cannot be started (the caller spawns in-process instead). */
  async acquire(): Promise<Launch | null> {
    this.acquiring++;
    try {
      // A launcher retired while we waited for it is replaced, not reported as unavailable (a few rounds at most:
      // a fresh launcher is never retired while an acquire waits).
      for (let round = 0; round < 3; round++) {
        if (!this.ready) {
          if (performance.now() - this.failedAt < RETRY_AFTER_MS) return null;
          this.ready = this.start();
        }
        const child = this.child;
        if (!(await this.ready) || !child) return null;
        if (this.child === child) return (req, events) => this.send(child, req, events);
        if (!this.retired.has(child)) return null;
      }
      return null;
    } finally {
      this.acquiring--;
    }
  }

  /** Stops the launcher (tests, shutdown). Commands in flight fail and their groups are killed. */
  stop(): void {
    clearTimeout(this.idleTimer);
    const child = this.child;
    if (child) {
      this.lost(child, 'the command launcher was stopped');
      child.kill('SIGKILL');
    }
  }

  /** The launcher's pid, when it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private start(): Promise<boolean> {
    // A fixed allowlist, nothing of the agent's own environment (it may hold secrets, and NODE_OPTIONS with
    // `--import tsx` would load tsx: the cost we are avoiding). Commands get their environment per spawn.
    const env = launcherEnv();
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [this.path], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        serialization: 'advanced',
        env,
      });
    } catch (err) {
      return Promise.resolve(this.startFailed(String(err)));
    }
    this.child = child;
    // The launcher never keeps the agent alive by itself; its channel does while it starts or runs commands.
    child.unref();
    return new Promise<boolean>((resolve) => {
      let started = false;
      const timer = setTimeout(() => {
        if (started) return;
        resolve(this.startFailed(`no ready message within ${READY_TIMEOUT_MS} ms`));
        this.lost(child, 'the command launcher did not start');
        child.kill('SIGKILL');
      }, READY_TIMEOUT_MS);
      timer.unref();
      child.on('message', (m: FromLauncher) => {
        if (m.t === 'ready') {
          started = true;
          clearTimeout(timer);
          if (this.inFlight.size === 0) this.idle(child);
          resolve(true);
          return;
        }
        this.route(m);
      });
      child.on('error', (err) => {
        if (started || this.child !== child) return;
        clearTimeout(timer);
        resolve(this.startFailed(err.message));
        this.lost(child, 'the command launcher could not be started');
      });
      child.on('exit', (code, sig) => {
        if (this.child !== child) return;
        if (!started) {
          clearTimeout(timer);
          resolve(this.startFailed(`exited with ${sig ?? code} before it was ready`));
        } else {
          this.log(`command launcher exited (${sig ?? code}); a new one starts with the next command`);
        }
        this.lost(child, 'the command launcher exited while the command ran; its process group was killed');
      });
    });
  }

  private startFailed(reason: string): false {
    this.log(`command launcher unavailable (${reason}): spawning commands in the agent process`);
    this.failedAt = performance.now();
    return false;
  }

  /** Forgets a dead (or abandoned) launcher: kills the groups of its commands and fails them. */
  private lost(child: ChildProcess, message: string): void {
    if (this.child !== child) return;
    clearTimeout(this.idleTimer);
    this.child = null;
    this.ready = null;
    const entries = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const { events, pid } of entries) {
      if (pid !== undefined) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // The group is already gone.
        }
      }
      events.fail(new Error(message));
    }
  }

  private send(child: ChildProcess, req: LaunchRequest, events: LaunchEvents): void {
    if (this.retired.has(child)) {
      // Retired between acquire() and this call: the command goes to the current (or a fresh) launcher.
      void this.acquire().then(
        (launch) =>
          launch
            ? launch(req, events)
            : events.fail(new Error('the command launcher exited before the command started')),
        (err: unknown) => events.fail(err instanceof Error ? err : new Error(String(err))),
      );
      return;
    }
    if (this.child !== child || !child.connected) {
      events.fail(new Error('the command launcher exited before the command started'));
      return;
    }
    const id = this.nextId++;
    this.inFlight.set(id, { events });
    clearTimeout(this.idleTimer);
    if (this.inFlight.size === 1) child.channel?.ref();
    child.send({ t: 'spawn', id, ...req });
  }

  private route(m: Exclude<FromLauncher, { t: 'ready' }>): void {
    const entry = this.inFlight.get(m.id);
    if (!entry) return;
    switch (m.t) {
      case 'pid':
        entry.pid = m.pid;
        entry.events.pid(m.pid);
        return;
      case 'error':
        entry.events.error(m.code);
        return;
      case 'exit':
        entry.events.exit(m.code, m.sig);
        return;
      case 'throw': {
        this.done(m.id);
        const err = (m.name === 'TypeError' ? new TypeError(m.message) : new Error(m.message)) as NodeJS.ErrnoException;
        if (m.code !== undefined) err.code = m.code;
        entry.events.fail(err);
        return;
      }
      case 'close':
        this.done(m.id);
        entry.events.close(m.code, m.sig, {
          stdout: asBuffer(m.stdout),
          stderr: asBuffer(m.stderr),
          stdoutCut: m.stdoutCut,
          stderrCut: m.stderrCut,
        });
        return;
    }
  }

  private done(id: number): void {
    this.inFlight.delete(id);
    if (this.inFlight.size === 0 && this.child) this.idle(this.child);
  }

  /** Nothing in flight: the channel stops holding the agent open, and the idle countdown starts. */
  private idle(child: ChildProcess): void {
    child.channel?.unref();
    clearTimeout(this.idleTimer);
    if (this.idleMs <= 0) return;
    this.idleTimer = setTimeout(() => this.retire(child), this.idleMs);
    this.idleTimer.unref();
  }

  private retire(child: ChildProcess): void {
    if (this.child !== child) return;
    // A command sent, or a start awaited, since the countdown began: not idle after all (send() restarts it).
    if (this.inFlight.size > 0 || this.acquiring > 0) {
      if (this.inFlight.size === 0) this.idle(child);
      return;
    }
    // Detach first: from here on every command goes to a new launcher, so closing this one's channel (on which
    // launcher.mjs exits) cannot lose one.
    this.retired.add(child);
    this.child = null;
    this.ready = null;
    if (child.connected) child.disconnect();
  }
}
