import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import type { ExecParams, ExecResult } from '@letkite/protocol';
import { type Launch, LauncherClient } from './launcher-client';
import { decodeTail, TailBuffer } from './tail-buffer';

/** After SIGTERM, a process group gets this long to exit before SIGKILL. */
export const KILL_GRACE_MS = 2_000;

/** How a command is actually started: possibly wrapped (sandbox helper) and as another OS account. */
export interface LaunchPlan {
  file: string;
  args: string[];
  env: Record<string, string>;
  uid?: number;
  gid?: number;
  /** Extra file descriptors to pass (index 3 onwards), e.g. the sandboxed command's environment. */
  extraFds?: (string | null)[];
  /** Where to spawn `file`, over the request's cwd: the sandbox helper starts in `/` and enters the cwd itself. */
  cwd?: string;
}

/** Why a spawn failed, in words: a missing working directory is not a missing program (issue #10 item 11). */
export function spawnFailure(file: string, cwd: string | undefined, code: string | undefined): string {
  if (code === 'ENOENT' && cwd !== undefined) {
    let isDir = false;
    try {
      isDir = statSync(cwd).isDirectory();
    } catch {}
    if (!isDir) return `letkite: working directory ${cwd} does not exist or is not a directory\n`;
  }
  const reason = code === 'ENOENT' ? 'command not found' : (code ?? 'spawn failed');
  return `letkite: ${file}: ${reason}\n`;
}

export interface ExecOutput {
  stdout: string;
  stderr: string;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/**
 * Spawns in this process: the fallback when the launcher cannot be started (same plan, same events, only a
 * costlier fork). A spawn() that throws (EPERM switching user …) fails the command, as it always did.
 */
export const spawnHere: Launch = (req, events) => {
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(req.file, req.args, {
      cwd: req.cwd,
      env: req.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', ...req.extraFds.map(() => 'pipe' as const)],
      ...(req.uid === undefined ? {} : { uid: req.uid }),
      ...(req.gid === undefined ? {} : { gid: req.gid }),
    });
  } catch (err) {
    events.fail(err as Error);
    return;
  }
  if (child.pid !== undefined) events.pid(child.pid);
  req.extraFds.forEach((text, i) => {
    const stream = child.stdio[3 + i] as NodeJS.WritableStream | null;
    // A helper that refused before reading its fd closes it: EPIPE is its refusal, not ours to crash on.
    stream?.on('error', () => {});
    if (stream && text !== null) stream.end(text);
  });
  const stdout = new TailBuffer(req.max);
  const stderr = new TailBuffer(req.max);
  child.stdout?.on('data', (c: Buffer) => stdout.write(c));
  child.stderr?.on('data', (c: Buffer) => stderr.write(c));
  child.stdin?.on('error', () => {
    // The command exited without reading all its input: not an error of ours.
  });
  if (req.stdin !== undefined) child.stdin?.end(req.stdin);
  else child.stdin?.end();
  child.on('error', (err: NodeJS.ErrnoException) => events.error(err.code));
  child.on('exit', (code, sig) => events.exit(code, sig));
  child.on('close', (code, sig) =>
    events.close(code, sig, {
      stdout: stdout.toBuffer(),
      stderr: stderr.toBuffer(),
      stdoutCut: stdout.truncated,
      stderrCut: stderr.truncated,
    }),
  );
};

/** The agent's one launcher process (native/letkite-launch.c), started with the first command. */
export const launcher = new LauncherClient();

/** `LETKITE_EXEC_LAUNCHER=off` spawns every command in the agent process (to compare, or to rule the launcher out). */
const launcherEnabled = process.env.LETKITE_EXEC_LAUNCHER !== 'off';

/**
 * Runs one command to completion: its own process group (so a timeout ends everything it started), stdin fed and
 * closed, each stream capped to the newest `max_output_bytes`. Never throws for the command's own failure: a
 * missing program is exit code 127 with the reason on stderr, like a shell.
 *
 * The fork itself happens in the launcher process (cheap to fork: small), or in this process when the launcher
 * cannot be started; everything else — timeout, cancellation, killing the group, the linger kill — is decided
 * here, the same way for both.
 */
export async function runExec(
  params: ExecParams,
  plan: LaunchPlan,
  signal?: AbortSignal,
  launch?: Launch,
): Promise<ExecResult & ExecOutput> {
  const started = performance.now();
  const start = launch ?? (launcherEnabled ? await launcher.acquire() : null) ?? spawnHere;
  return new Promise((resolve, reject) => {
    let timedOut = false;
    let settled = false;
    let pid: number | undefined;
    /** Signals asked for before the pid was known, sent once it is. */
    let pendingTerminate = false;
    let killTimer: NodeJS.Timeout | undefined;
    let lingerTimer: NodeJS.Timeout | undefined;
    let exited: { code: number | null; sig: string | null } | null = null;

    const cleanup = () => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      clearTimeout(lingerTimer);
      signal?.removeEventListener('abort', onAbort);
    };
    const finish = (exitCode: number | null, sig: string | null, stdout: TailBuffer, stderr: TailBuffer) => {
      if (settled) return;
      cleanup();
      resolve({
        exit_code: exitCode,
        signal: sig,
        stdout: decodeTail(stdout.toBuffer(), stdout.truncated),
        stderr: decodeTail(stderr.toBuffer(), stderr.truncated),
        duration_ms: Math.round(performance.now() - started),
        truncated: stdout.truncated || stderr.truncated,
        timed_out: timedOut,
      });
    };

    const terminate = () => {
      if (pid === undefined) {
        pendingTerminate = true;
        return;
      }
      const p = pid;
      killGroup(p, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(p, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, params.timeout_ms);
    const onAbort = () => terminate();
    signal?.addEventListener('abort', onAbort, { once: true });

    const cwd = plan.cwd ?? params.cwd;
    start(
      {
        file: plan.file,
        args: plan.args,
        cwd,
        env: plan.env,
        ...(plan.uid === undefined ? {} : { uid: plan.uid }),
        ...(plan.gid === undefined ? {} : { gid: plan.gid }),
        extraFds: plan.extraFds ?? [],
        stdin: params.stdin,
        max: params.max_output_bytes,
      },
      {
        pid: (p) => {
          pid = p;
          if (pendingTerminate && !settled) terminate();
        },
        error: (code) => {
          const stderr = new TailBuffer(params.max_output_bytes);
          stderr.write(Buffer.from(spawnFailure(plan.file, cwd, code)));
          finish(127, null, new TailBuffer(params.max_output_bytes), stderr);
        },
        // Output is complete at close (pipes drained). A background process left in the group can hold the
        // pipes open after the command itself exited: give it a moment, then end the whole group.
        exit: (code, sig) => {
          exited = { code, sig };
          lingerTimer = setTimeout(() => {
            if (pid !== undefined) killGroup(pid, 'SIGKILL');
          }, 200);
        },
        close: (code, sig, output) => {
          clearTimeout(lingerTimer);
          if (pid !== undefined) killGroup(pid, 'SIGKILL');
          const e = exited ?? { code, sig };
          finish(e.code, e.sig, received(output.stdout, output.stdoutCut), received(output.stderr, output.stderrCut));
        },
        fail: (err) => {
          if (settled) return;
          cleanup();
          reject(err);
        },
      },
    );
  });

  function received(bytes: Buffer, cut: boolean): TailBuffer {
    const b = new TailBuffer(params.max_output_bytes);
    b.write(bytes);
    b.truncated ||= cut;
    return b;
  }
}
