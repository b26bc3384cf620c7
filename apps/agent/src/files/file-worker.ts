import { type ChildProcess, fork } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, LetKiteError } from '@letkite/protocol';
import type { WorkerRequest, WorkerResponse } from './worker-protocol';

// Built (tools/build), the worker is its own small bundle next to the agent's.
const workerMain = fileURLToPath(
  new URL(import.meta.letkiteBundle ? './file-worker.mjs' : './worker-main.ts', import.meta.url),
);

/** How long a file operation may take in the worker before it is abandoned (and the worker restarted). */
const OPERATION_TIMEOUT_MS = 120_000;

/**
 * A long-lived child process running as one OS account, serving file operations for it. Started on first use,
 * restarted if it dies; operations in flight when it dies fail with `internal`.
 */
export class FileWorker {
  private child: ChildProcess | null = null;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: LetKiteError) => void; timer: NodeJS.Timeout }
  >();

  constructor(
    private readonly account: { uid: number; gid: number; home: string; name: string },
    private readonly log: (msg: string) => void,
  ) {}

  run(request: Omit<WorkerRequest, 'id'>): Promise<unknown> {
    const child = this.ensure();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new LetKiteError('timeout', `file operation ${request.op} took longer than ${OPERATION_TIMEOUT_MS} ms`));
        child.kill('SIGKILL');
      }, OPERATION_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      child.send({ ...request, id } satisfies WorkerRequest);
    });
  }

  stop(): void {
    this.child?.kill('SIGTERM');
    this.child = null;
  }

  private ensure(): ChildProcess {
    if (this.child && this.child.exitCode === null && this.child.connected) return this.child;
    const child = fork(workerMain, [], {
      execArgv: process.execArgv,
      uid: this.account.uid,
      gid: this.account.gid,
      // Next to the worker's source, so loader flags such as `--import tsx` resolve; every path it serves is absolute.
      cwd: dirname(workerMain),
      env: {
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        HOME: this.account.home,
        USER: this.account.name,
        LOGNAME: this.account.name,
        LANG: process.env.LANG ?? 'C.UTF-8',
      },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    child.stderr?.on('data', (c: Buffer) => this.log(`file worker (${this.account.name}): ${c.toString().trim()}`));
    child.on('message', (m: WorkerResponse) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.ok) p.resolve(m.result);
      else
        p.reject(new LetKiteError(ErrorCode.catch('internal').parse(m.error.code), m.error.message, m.error.details));
    });
    child.on('exit', () => {
      if (this.child === child) this.child = null;
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        clearTimeout(p.timer);
        p.reject(new LetKiteError('internal', 'the file worker stopped during the operation'));
      }
    });
    this.child = child;
    return child;
  }
}
