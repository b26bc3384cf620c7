import { spawn } from 'node:child_process';
import type { ExecParams, ExecResult } from '@letkite/protocol';
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
  /** Extra file descriptors to pass (index 3 onwards), e.g. a sandbox spec. */
  extraFds?: (string | null)[];
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
 * Runs one command to completion: its own process group (so a timeout ends everything it started), stdin fed and
 * closed, each stream capped to the newest `max_output_bytes`. Never throws for the command's own failure: a
 * missing program is exit code 127 with the reason on stderr, like a shell.
 */
export function runExec(params: ExecParams, plan: LaunchPlan, signal?: AbortSignal): Promise<ExecResult & ExecOutput> {
  const started = performance.now();
  const stdout = new TailBuffer(params.max_output_bytes);
  const stderr = new TailBuffer(params.max_output_bytes);
  return new Promise((resolve) => {
    let timedOut = false;
    let settled = false;
    const child = spawn(plan.file, plan.args, {
      cwd: params.cwd,
      env: plan.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', ...(plan.extraFds ?? []).map(() => 'pipe' as const)],
      ...(plan.uid === undefined ? {} : { uid: plan.uid }),
      ...(plan.gid === undefined ? {} : { gid: plan.gid }),
    });
    plan.extraFds?.forEach((text, i) => {
      const stream = child.stdio[3 + i] as NodeJS.WritableStream | null;
      if (stream && text !== null) stream.end(text);
    });

    const finish = (exitCode: number | null, sig: string | null, spawnError?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      signal?.removeEventListener('abort', onAbort);
      if (spawnError) stderr.write(Buffer.from(spawnError));
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

    let killTimer: NodeJS.Timeout | undefined;
    const terminate = () => {
      if (child.pid === undefined) return;
      const pid = child.pid;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, params.timeout_ms);
    const onAbort = () => terminate();
    signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (c: Buffer) => stdout.write(c));
    child.stderr.on('data', (c: Buffer) => stderr.write(c));
    child.stdin.on('error', () => {
      // The command exited without reading all its input: not an error of ours.
    });
    if (params.stdin !== undefined) child.stdin.end(params.stdin);
    else child.stdin.end();

    child.on('error', (err: NodeJS.ErrnoException) => {
      const reason = err.code === 'ENOENT' ? 'command not found' : (err.code ?? 'spawn failed');
      finish(127, null, `letkite: ${plan.file}: ${reason}\n`);
    });
    // Output is complete at 'close' (pipes drained). A background process left in the group can hold the pipes
    // open after the command itself exited: give it a moment, then end the whole group.
    let exited: { code: number | null; sig: string | null } | null = null;
    let lingerTimer: NodeJS.Timeout | undefined;
    child.on('exit', (code, sig) => {
      exited = { code, sig };
      lingerTimer = setTimeout(() => {
        if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      }, 200);
    });
    child.on('close', (code, sig) => {
      clearTimeout(lingerTimer);
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      const e = exited ?? { code, sig };
      finish(e.code, e.sig);
    });
  });
}
