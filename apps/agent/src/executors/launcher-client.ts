import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { TRUSTED_PATH } from '../launch-plan';

// The agent's side of the exec launcher, native/letkite-launch.c: a small static C process that forks and execs
// each `exec` command the way Node's spawn() would (see the top of the C file), so the fork copies ~1 MiB of
// page tables instead of the agent's. Everything else — timeouts, cancellation, killing groups — stays in
// runExec (exec.ts), the same for the launcher and for the in-process fallback (spawnHere).
//
// Protocol on the launcher's stdin/stdout, defined for this side in encodeSpawn / decodeFrame below (and for the
// C side at the top of letkite-launch.c): every frame is a little-endian u32 body length, then u8 type, u32 id,
// then fields; `bytes` is a u32 length and that many bytes, `str` the same holding UTF-8 text.
//   to it    1 spawn  u32 flags (1 uid, 2 gid, 8 cwd), u32 uid, u32 gid, u32 max, str file, str cwd,
//                     u32 argc, argc × str, u32 envc, envc × str "NAME=value", u32 nfds, nfds × bytes, bytes stdin
//   from it  0 ready; 1 pid u32; 2 throw str code; 3 error str code; 4 exit i32 code, str signal ("" = none);
//            5 close i32 code, str signal, u8 cut (1 stdout, 2 stderr), bytes stdout, bytes stderr
// An input with nothing to write (stdin undefined, an extra fd `null`) is sent empty: the launcher closes its
// end at once and the command reads EOF.

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
  | { t: 'throw'; id: number; code: string }
  | { t: 'error'; id: number; code: string }
  | { t: 'exit'; id: number; code: number | null; sig: string | null }
  | ({ t: 'close'; id: number; code: number | null; sig: string | null } & LaunchOutput);

// ---- the protocol (the C side: the top of native/letkite-launch.c) ----

const SPAWN = 1;
const FLAG_UID = 1;
const FLAG_GID = 2;
const FLAG_CWD = 8;
const FROM_LAUNCHER = ['ready', 'pid', 'throw', 'error', 'exit', 'close'] as const;

/**
 * Node's spawn() refuses a NUL byte in any string it passes to the kernel (which would cut it short), and an
 * empty file: so do we, with Node's error code. The message names the property, never the value (an
 * environment value may be a secret).
 */
function assertSpawnable(req: LaunchRequest): void {
  const refuse = (what: string, why: string) => {
    const err = new TypeError(`The argument '${what}' ${why}`) as NodeJS.ErrnoException;
    err.code = 'ERR_INVALID_ARG_VALUE';
    throw err;
  };
  const check = (what: string, s: string) => {
    if (s.includes('\0')) refuse(what, 'must be a string without null bytes');
  };
  if (req.file.length === 0) refuse('file', 'cannot be empty');
  check('file', req.file);
  for (const [i, a] of req.args.entries()) check(`args[${i}]`, a);
  if (req.cwd !== undefined) check('options.cwd', req.cwd);
  for (const [k, v] of Object.entries(req.env)) {
    check('options.env (a name)', k);
    check(`options.env['${k}']`, v);
  }
}

function encodeSpawn(id: number, req: LaunchRequest): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number) => {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(n >>> 0);
    parts.push(b);
  };
  const bytes = (b: Buffer) => {
    u32(b.length);
    parts.push(b);
  };
  const str = (s: string) => bytes(Buffer.from(s, 'utf8'));
  const flags =
    (req.uid === undefined ? 0 : FLAG_UID) |
    (req.gid === undefined ? 0 : FLAG_GID) |
    (req.cwd === undefined ? 0 : FLAG_CWD);
  u32(flags);
  u32(req.uid ?? 0);
  u32(req.gid ?? 0);
  u32(req.max);
  str(req.file);
  str(req.cwd ?? '');
  u32(req.args.length);
  for (const a of req.args) str(a);
  const env = Object.entries(req.env);
  u32(env.length);
  for (const [k, v] of env) str(`${k}=${v}`);
  u32(req.extraFds.length);
  for (const text of req.extraFds) str(text ?? '');
  str(req.stdin ?? '');
  const body = Buffer.concat(parts);
  const head = Buffer.allocUnsafe(9);
  head.writeUInt32LE(body.length + 5, 0);
  head.writeUInt8(SPAWN, 4);
  head.writeUInt32LE(id, 5);
  return Buffer.concat([head, body]);
}

function decodeFrame(body: Buffer): FromLauncher {
  let at = 5;
  const u32 = () => {
    const n = body.readUInt32LE(at);
    at += 4;
    return n;
  };
  const bytes = () => {
    const n = u32();
    if (at + n > body.length) throw new RangeError('a field runs past its frame');
    const b = body.subarray(at, at + n);
    at += n;
    return b;
  };
  const str = () => bytes().toString('utf8');
  /** Node's (code, signal): code null when a signal ended the command. */
  const status = () => {
    const code = body.readInt32LE(at);
    at += 4;
    const sig = str();
    return sig === '' ? { code, sig: null } : { code: null, sig };
  };
  const t = FROM_LAUNCHER[body.readUInt8(0)];
  const id = body.readUInt32LE(1);
  switch (t) {
    case 'ready':
      return { t };
    case 'pid':
      return { t, id, pid: u32() };
    case 'throw':
    case 'error':
      return { t, id, code: str() };
    case 'exit':
      return { t, id, ...status() };
    case 'close': {
      const s = status();
      const cut = body.readUInt8(at++);
      const stdout = bytes();
      const stderr = bytes();
      return { t, id, ...s, stdout, stderr, stdoutCut: (cut & 1) !== 0, stderrCut: (cut & 2) !== 0 };
    }
    default:
      throw new RangeError(`unknown frame type ${body.readUInt8(0)}`);
  }
}

/** Splits the launcher's stdout into frames; a frame's chunks are joined once, when it is complete. */
class FrameReader {
  private chunks: Buffer[] = [];
  private size = 0;

  push(chunk: Buffer, onFrame: (m: FromLauncher) => void): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size >= 4) {
      let head = this.chunks[0] as Buffer;
      if (head.length < 4) head = this.join();
      const need = 4 + head.readUInt32LE(0);
      if (this.size < need) return;
      if (head.length < need) head = this.join();
      const body = head.subarray(4, need);
      this.chunks[0] = head.subarray(need);
      this.size -= need;
      if (this.chunks[0].length === 0) this.chunks.shift();
      onFrame(decodeFrame(body));
    }
  }

  private join(): Buffer {
    const all = Buffer.concat(this.chunks, this.size);
    this.chunks = [all];
    return all;
  }
}

/** How long the launcher may take to start before calls fall back to spawning in the agent. */
const READY_TIMEOUT_MS = 10_000;
/** After the launcher failed to start, calls spawn in-process this long before another start is tried. */
const RETRY_AFTER_MS = 30_000;
/** The launcher exits after this long without a command in flight (issue #13: nothing of it stays while idle). */
export const DEFAULT_IDLE_MS = 60_000;

/** `LETKITE_EXEC_LAUNCHER_IDLE_MS`: the idle time before the launcher exits; 0 keeps it for good. */
export function idleFromEnv(value = process.env.LETKITE_EXEC_LAUNCHER_IDLE_MS): number {
  if (value === undefined || value.trim() === '') return DEFAULT_IDLE_MS;
  const ms = Number(value);
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : DEFAULT_IDLE_MS;
}

/** Where `npm install` / `npm run build -w @letkite/agent` puts the launcher; built, next to the bundle. */
export function launcherPath(): string {
  if (import.meta.letkiteBundle) return fileURLToPath(new URL('./letkite-launch', import.meta.url));
  return fileURLToPath(new URL('../../native/build/letkite-launch', import.meta.url));
}

/**
 * The agent's side of letkite-launch: starts it (a fixed environment), routes its replies to the commands in
 * flight, and keeps it from holding the agent's event loop open while idle. If it dies, the process groups of the
 * commands in flight are killed and those commands fail; the next command starts a new launcher. Without the
 * binary (not built: no C compiler, not Linux), acquire() returns null and commands spawn in the agent.
 *
 * After `idleMs` without a command in flight it is retired: detached first (so no new command can be sent to it),
 * then its stdin is closed, on which it exits. A command that arrives meanwhile starts a fresh launcher; a Launch
 * obtained before the retirement sends to the fresh one too. Nothing is in flight on a retired launcher, so
 * nothing is lost with it.
 */
export class LauncherClient {
  private child: ChildProcess | null = null;
  private ready: Promise<boolean> | null = null;
  private failedAt = Number.NEGATIVE_INFINITY;
  private reportedMissing = false;
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
    if (!existsSync(this.path)) {
      // Not built here (no C compiler, or not Linux): say it once, not at every retry.
      const first = !this.reportedMissing;
      this.reportedMissing = true;
      return Promise.resolve(
        this.startFailed(
          `${this.path} is missing; \`npm run build -w @letkite/agent\` builds it (needs a C compiler)`,
          first,
        ),
      );
    }
    // A fixed allowlist, nothing of the agent's own environment (it may hold secrets). Commands get their
    // environment per spawn.
    let child: ChildProcess;
    try {
      child = spawn(this.path, [], { stdio: ['pipe', 'pipe', 'inherit'], env: launcherEnv() });
    } catch (err) {
      return Promise.resolve(this.startFailed(String(err)));
    }
    this.child = child;
    // The launcher never keeps the agent alive by itself; its stdout does while it starts or runs commands.
    child.unref();
    // EPIPE when it died: its exit is handled below.
    child.stdin?.on('error', () => {});
    const frames = new FrameReader();
    return new Promise<boolean>((resolve) => {
      let started = false;
      const timer = setTimeout(() => {
        if (started) return;
        resolve(this.startFailed(`no ready message within ${READY_TIMEOUT_MS} ms`));
        this.lost(child, 'the command launcher did not start');
        child.kill('SIGKILL');
      }, READY_TIMEOUT_MS);
      timer.unref();
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          frames.push(chunk, (m) => {
            if (m.t !== 'ready') {
              this.route(m);
              return;
            }
            started = true;
            clearTimeout(timer);
            if (this.inFlight.size === 0) this.idle(child);
            resolve(true);
          });
        } catch (err) {
          this.log(`command launcher sent a malformed frame (${String(err)}); it is restarted with the next command`);
          this.lost(child, 'the command launcher failed while the command ran; its process group was killed');
          child.kill('SIGKILL');
        }
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

  private startFailed(reason: string, report = true): false {
    if (report) this.log(`command launcher unavailable (${reason}): spawning commands in the agent process`);
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
    if (this.child !== child || !child.stdin?.writable) {
      events.fail(new Error('the command launcher exited before the command started'));
      return;
    }
    let frame: Buffer;
    try {
      assertSpawnable(req);
      frame = encodeSpawn(this.nextId, req);
    } catch (err) {
      events.fail(err as Error);
      return;
    }
    const id = this.nextId++;
    this.inFlight.set(id, { events });
    clearTimeout(this.idleTimer);
    if (this.inFlight.size === 1) (child.stdout as Socket | null)?.ref();
    child.stdin.write(frame);
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
        // What Node's spawn() throws: an ErrnoException of syscall "spawn".
        this.done(m.id);
        const err = new Error(`spawn ${m.code}`) as NodeJS.ErrnoException;
        err.code = m.code;
        err.syscall = 'spawn';
        entry.events.fail(err);
        return;
      }
      case 'close':
        this.done(m.id);
        entry.events.close(m.code, m.sig, {
          stdout: m.stdout,
          stderr: m.stderr,
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

  /** Nothing in flight: the launcher's pipes stop holding the agent open, and the idle countdown starts. */
  private idle(child: ChildProcess): void {
    (child.stdout as Socket | null)?.unref();
    (child.stdin as Socket | null)?.unref();
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
    // Detach first: from here on every command goes to a new launcher, so closing this one's stdin (on which
    // it exits) cannot lose one.
    this.retired.add(child);
    this.child = null;
    this.ready = null;
    child.stdin?.end();
  }
}
