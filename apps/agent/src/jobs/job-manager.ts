import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type JobInfo, type JobOutputResult, LetKiteError, type RequestContext } from '@letkite/protocol';
import { JobOutputParams, JobRef, JobStartParams, JobState } from '@letkite/protocol/ops-jobs';
import { z } from 'zod';
import type { CeilingState } from '../ceiling/ceiling-source';
import { KILL_GRACE_MS, spawnFailure } from '../executors/exec';
import { commandArgv } from '../executors/exec-command';
import { type PreparedLaunch, prepareLaunch } from '../executors/prepare-launch';
import { authorizeCommand, authorizeGatedTool } from '../guard/authorize-command';
import { requestPolicy } from '../guard/request-policy';
import { sandboxRefusal } from '../sandbox';
import { JobLog } from './job-log';

/** A finished job's output and state are kept this long, then removed. */
export const JOB_RETENTION_MS = 24 * 3600_000;
/** At most this many jobs (running or kept) per machine; the oldest finished ones make room. */
export const MAX_JOBS = 64;
/** At most this many running at once. */
export const MAX_RUNNING_JOBS = 16;

const JobMeta = z.object({
  job_id: z.string(),
  owner: z.string(),
  command: z.union([z.string(), z.array(z.string())]),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  state: JobState,
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  note: z.string().nullable(),
  pid: z.number().int().nullable(),
  /** The process's start time (/proc/<pid>/stat field 22), so a reused pid is never mistaken for the job. */
  pid_start: z.string().nullable(),
});
type JobMeta = z.infer<typeof JobMeta>;

interface LiveJob {
  meta: JobMeta;
  log: JobLog;
  child: ChildProcess | null;
  /** What ended it, when we did. */
  endedBy: 'timeout' | 'stop' | null;
  timer: NodeJS.Timeout | undefined;
  killTimer: NodeJS.Timeout | undefined;
  done: Promise<void>;
  launch: PreparedLaunch | null;
}

function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; starttime is field 22 overall.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function killGroup(pid: number | null, signal: NodeJS.Signals): void {
  if (pid === null) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Gone already.
  }
}

/**
 * Background jobs: started with the same checks, run-as account and sandbox as `exec`, their output kept in a
 * bounded file (JobLog) under `<stateDir>/jobs/<id>/` next to a `meta.json` that is rewritten on every state
 * change. A job the agent finds `running` on disk at start-up belonged to a previous agent process: its output
 * went nowhere since, so it is marked `lost` (and its process group, if the very same process still exists, is
 * killed). Jobs belong to the caller that started them; others get `not_found`.
 */
export class JobManager {
  private readonly jobs = new Map<string, LiveJob>();
  private readonly root: string;
  private readonly sweeper: NodeJS.Timeout;
  /** Shutdown runs once, however many signals ask for it. */
  private closed = false;

  constructor(
    stateDir: string,
    private readonly log: (msg: string) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {
    this.root = join(stateDir, 'jobs');
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    this.loadPrevious();
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  async start(raw: unknown, context: RequestContext, ceiling: CeilingState): Promise<JobInfo> {
    const parsed = JobStartParams.safeParse(raw);
    if (!parsed.success) throw new LetKiteError('invalid_params', 'malformed job_start parameters');
    const params = parsed.data;
    if ((params.command === undefined) === (params.argv === undefined)) {
      throw new LetKiteError('invalid_params', 'give exactly one of "command" or "argv"');
    }
    const rp = requestPolicy(context.policy, ceiling);
    const command = params.command ?? params.argv ?? [];
    authorizeGatedTool(rp, 'job_start', context);
    const { words } = authorizeCommand(rp, command, context, params.env);
    const argv = commandArgv(rp, params, words);
    this.sweep();
    this.makeRoom();
    const launch = await prepareLaunch(rp, argv, { cwd: params.cwd, env: params.env });
    const id = `job_${randomBytes(16).toString('base64url')}`;
    const dir = join(this.root, id);
    mkdirSync(dir, { mode: 0o700 });
    const meta: JobMeta = {
      job_id: id,
      owner: context.actor ?? '',
      command,
      started_at: new Date(this.now()).toISOString(),
      finished_at: null,
      state: 'running',
      exit_code: null,
      signal: null,
      note: launch.sandboxed ? 'runs in the sandbox' : null,
      pid: null,
      pid_start: null,
    };
    const job: LiveJob = {
      meta,
      log: JobLog.open(dir),
      child: null,
      endedBy: null,
      timer: undefined,
      killTimer: undefined,
      done: Promise.resolve(),
      launch,
    };
    this.jobs.set(id, job);
    this.spawn(job, params.timeout_ms);
    return this.info(job);
  }

  status(raw: unknown, context: RequestContext): JobInfo {
    const { job_id } = this.parse(JobRef, raw);
    return this.info(this.find(job_id, context));
  }

  output(raw: unknown, context: RequestContext): JobOutputResult {
    const p = this.parse(JobOutputParams, raw);
    const job = this.find(p.job_id, context);
    const final = job.meta.state !== 'running';
    const page = job.log.read(p.offset, p.size, p.max_lines, final);
    return {
      job_id: job.meta.job_id,
      state: job.meta.state,
      offset: page.offset,
      next_offset: page.nextOffset,
      data: page.data.toString('utf8'),
      skipped_bytes: page.skippedBytes,
      output_bytes: job.log.end,
      eof: final && page.nextOffset >= job.log.end,
    };
  }

  /** SIGTERM to the job's process group, SIGKILL after the grace period; resolves with its final state. */
  async stop(raw: unknown, context: RequestContext): Promise<JobInfo> {
    const { job_id } = this.parse(JobRef, raw);
    const job = this.find(job_id, context);
    if (job.meta.state === 'running' && job.child) {
      job.endedBy ??= 'stop';
      this.terminate(job);
      await job.done;
    }
    return this.info(job);
  }

  /** Agent shutdown: running jobs are ended and recorded as lost (their output would go nowhere). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    for (const job of this.jobs.values()) {
      if (job.meta.state === 'running') {
        killGroup(job.meta.pid, 'SIGKILL');
        this.finish(job, 'lost', null, null, 'the agent stopped while the job was running');
      }
      job.log.close();
    }
  }

  private parse<T extends z.ZodType>(schema: T, raw: unknown): z.infer<T> {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw new LetKiteError('invalid_params', 'malformed job parameters');
    return parsed.data;
  }

  private find(id: string, context: RequestContext): LiveJob {
    const job = this.jobs.get(id);
    if (!job || job.meta.owner !== (context.actor ?? '')) throw new LetKiteError('not_found', `no job "${id}"`);
    return job;
  }

  private info(job: LiveJob): JobInfo {
    const m = job.meta;
    return {
      job_id: m.job_id,
      state: m.state,
      command: m.command,
      started_at: m.started_at,
      finished_at: m.finished_at,
      exit_code: m.exit_code,
      signal: m.signal,
      output_bytes: job.log.end,
      output_start: job.log.start,
      note: m.note,
    };
  }

  private spawn(job: LiveJob, timeoutMs: number): void {
    const { plan, cwd } = job.launch as PreparedLaunch;
    const child = spawn(plan.file, plan.args, {
      cwd,
      env: plan.env,
      detached: true,
      // fd 3 onwards: e.g. the sandboxed command's environment, which never reaches the helper itself.
      stdio: ['ignore', 'pipe', 'pipe', ...(plan.extraFds ?? []).map(() => 'pipe' as const)],
      ...(plan.uid === undefined ? {} : { uid: plan.uid }),
      ...(plan.gid === undefined ? {} : { gid: plan.gid }),
    });
    (plan.extraFds ?? []).forEach((text, i) => {
      const stream = child.stdio[3 + i] as NodeJS.WritableStream | null;
      stream?.on('error', () => {});
      if (stream && text !== null) stream.end(text);
    });
    job.child = child;
    job.meta.pid = child.pid ?? null;
    job.meta.pid_start = child.pid === undefined ? null : processStart(child.pid);
    this.save(job);
    const write = (c: Buffer) => {
      if (job.meta.state === 'running') job.log.append(c);
    };
    child.stdout?.on('data', write);
    child.stderr?.on('data', write);
    job.timer = setTimeout(() => {
      job.endedBy ??= 'timeout';
      this.terminate(job);
    }, timeoutMs);
    job.done = new Promise<void>((resolve) => {
      let exited: { code: number | null; sig: NodeJS.Signals | null } | null = null;
      let linger: NodeJS.Timeout | undefined;
      child.on('error', (err: NodeJS.ErrnoException) => {
        job.log.append(
          // A missing working directory is named as such, not as a missing program (issue #10 item 11).
          Buffer.from(spawnFailure(plan.file, cwd, err.code)),
        );
        this.finish(job, 'exited', 127, null, null);
        resolve();
      });
      child.on('exit', (code, sig) => {
        exited = { code, sig };
        // A background process left in the group can hold the pipes open: give it a moment, then end the group.
        linger = setTimeout(() => killGroup(job.meta.pid, 'SIGKILL'), 200);
      });
      child.on('close', (code, sig) => {
        clearTimeout(linger);
        killGroup(job.meta.pid, 'SIGKILL');
        const e = exited ?? { code, sig };
        const refusal = job.launch?.sandboxed
          ? sandboxRefusal(e.code, job.log.read(job.log.start, 4096, 20).data.toString('utf8'))
          : undefined;
        if (refusal) job.meta.note = refusal.message;
        const state: JobState =
          job.endedBy === 'stop' ? 'stopped' : job.endedBy === 'timeout' ? 'timed_out' : e.sig ? 'killed' : 'exited';
        this.finish(job, state, e.code, e.sig, null);
        resolve();
      });
    });
  }

  private terminate(job: LiveJob): void {
    if (job.meta.state !== 'running') return;
    killGroup(job.meta.pid, 'SIGTERM');
    clearTimeout(job.killTimer);
    job.killTimer = setTimeout(() => killGroup(job.meta.pid, 'SIGKILL'), KILL_GRACE_MS);
  }

  private finish(
    job: LiveJob,
    state: JobState,
    exitCode: number | null,
    signal: string | null,
    note: string | null,
  ): void {
    if (job.meta.state !== 'running') return;
    clearTimeout(job.timer);
    clearTimeout(job.killTimer);
    job.meta = {
      ...job.meta,
      state,
      exit_code: exitCode,
      signal,
      finished_at: new Date(this.now()).toISOString(),
      note: note ?? job.meta.note,
    };
    job.launch?.release();
    job.launch = null;
    this.save(job);
  }

  private save(job: LiveJob): void {
    const file = join(this.root, job.meta.job_id, 'meta.json');
    writeFileSync(`${file}.tmp`, JSON.stringify(job.meta), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }

  private loadPrevious(): void {
    for (const id of readdirSync(this.root)) {
      const dir = join(this.root, id);
      let meta: JobMeta;
      try {
        meta = JobMeta.parse(JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')));
      } catch {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      const job: LiveJob = {
        meta,
        log: JobLog.open(dir),
        child: null,
        endedBy: null,
        timer: undefined,
        killTimer: undefined,
        done: Promise.resolve(),
        launch: null,
      };
      this.jobs.set(id, job);
      if (meta.state === 'running') {
        if (meta.pid !== null && meta.pid_start !== null && processStart(meta.pid) === meta.pid_start) {
          killGroup(meta.pid, 'SIGKILL');
        }
        this.finish(job, 'lost', null, null, 'the agent restarted while the job was running; its end is unknown');
        this.log(`job ${id} was running when the agent stopped: marked lost`);
      }
    }
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, job] of this.jobs) {
      const finished = job.meta.finished_at === null ? null : Date.parse(job.meta.finished_at);
      if (finished !== null && now - finished > JOB_RETENTION_MS) this.remove(id);
    }
  }

  private makeRoom(): void {
    const running = [...this.jobs.values()].filter((j) => j.meta.state === 'running').length;
    if (running >= MAX_RUNNING_JOBS) {
      throw new LetKiteError('rate_limited', `this machine already runs ${MAX_RUNNING_JOBS} jobs`, {
        max: MAX_RUNNING_JOBS,
      });
    }
    const finished = [...this.jobs.values()]
      .filter((j) => j.meta.state !== 'running')
      .sort((a, b) => (a.meta.finished_at ?? '').localeCompare(b.meta.finished_at ?? ''));
    while (this.jobs.size >= MAX_JOBS && finished.length > 0) {
      const oldest = finished.shift();
      if (oldest) this.remove(oldest.meta.job_id);
    }
  }

  private remove(id: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    job.log.close();
    this.jobs.delete(id);
    rmSync(join(this.root, id), { recursive: true, force: true });
  }
}
