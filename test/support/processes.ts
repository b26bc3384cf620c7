import { type ChildProcess, type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository root and the CLI entry point every test process runs. */
export const repoRoot = resolve(import.meta.dirname, '../..');

/** `tools/build/build.mjs TARGET --if-stale` (agent, cli): the built product a test installs or runs, rebuilt only when stale. */
export function buildIfStale(target: 'agent' | 'cli', timeoutMs: number): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ['tools/build/build.mjs', target, '--if-stale'], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: timeoutMs,
  });
}
export const cliMain = join(repoRoot, 'apps/cli/src/main.ts');

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `letkite-${prefix}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolvePort(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

export async function waitFor<T>(
  /** What is awaited, for the timeout's message; a function is read at the timeout (e.g. output captured by then). */
  what: string | (() => string),
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const described = typeof what === 'function' ? what() : what;
  throw new Error(`timed out waiting for ${described}${lastError ? `: ${String(lastError)}` : ''}`);
}

/** A CLI process: its output so far, and a way to wait for a line. */
export class CliProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(args: string[], env: Record<string, string> = {}, input?: string) {
    this.child = spawn(process.execPath, ['--import', 'tsx', cliMain, ...args], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (c: Buffer) => {
      this.stdout += c.toString();
    });
    this.child.stderr?.on('data', (c: Buffer) => {
      this.stderr += c.toString();
    });
    if (input !== undefined) this.child.stdin?.end(input);
    else this.child.stdin?.end();
    this.exited = new Promise((r) => this.child.on('exit', (code) => r(code)));
  }

  waitForOutput(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
    return waitFor(
      () => `output ${pattern}\n--- stdout:\n${this.stdout}\n--- stderr:\n${this.stderr}`,
      () => (this.stdout + this.stderr).match(pattern),
      timeoutMs,
    );
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill(signal);
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 5000))]);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Runs a CLI command to completion. */
export async function runCliCommand(
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = new CliProcess(args, env, input);
  const code = await p.exited;
  return { code, stdout: p.stdout, stderr: p.stderr };
}
