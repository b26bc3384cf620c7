import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';

// fs-ext is a native addon (CommonJS): flock(2), which Node's fs does not offer.
const { flockSync } = createRequire(import.meta.url)('fs-ext') as {
  flockSync(fd: number, flags: 'exnb' | 'un'): void;
};

/** The lock file's name inside the data directory. */
export const LOCK_FILE = 'start.lock';

/** What the lock file says about the `letkite start` that holds it. */
export const LockHolder = z.object({
  pid: z.number().int(),
  host: z.string(),
  port: z.number().int().nullable(),
  started_at: z.string(),
});
export type LockHolder = z.infer<typeof LockHolder>;

/**
 * One `letkite start` per data directory: two would share one database and one local agent identity, and the two
 * agents would keep kicking each other off the gateway. The lock is flock(2) on `<data>/start.lock`, held as long as
 * this process lives (the kernel drops it when the process dies, however it dies), and the file says who holds it.
 * A file left by a process that is gone is simply taken over.
 */
export class DataDirLock {
  private constructor(
    private fd: number,
    private holder: LockHolder,
    /** The holder a previous, no longer running start left in the file, if any. */
    readonly tookOverFrom: LockHolder | null,
  ) {}

  /** Takes the lock or throws `conflict` naming the process that holds it (pid, host, port). */
  static acquire(dataDir: string, now: Date = new Date()): DataDirLock {
    const path = join(dataDir, LOCK_FILE);
    // O_CLOEXEC (libuv's default) keeps the lock out of the agent child: it must end with this process.
    const fd = openSync(path, 'a+', 0o600);
    try {
      flockSync(fd, 'exnb');
    } catch (err) {
      closeSync(fd);
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK') throw err;
      const holder = readHolder(path);
      const who = holder
        ? `letkite start (pid ${holder.pid} on ${holder.host}${holder.port === null ? '' : `, port ${holder.port}`}, since ${holder.started_at})`
        : 'another letkite start';
      throw new LetKiteError(
        'conflict',
        `the data directory ${dataDir} is in use by ${who}; stop it first, or start with --data DIR for a separate installation`,
        { lock_file: path, ...(holder ? { holder } : {}) },
      );
    }
    const previous = readHolder(path);
    const lock = new DataDirLock(
      fd,
      { pid: process.pid, host: hostname(), port: null, started_at: now.toISOString() },
      previous && previous.pid !== process.pid ? previous : null,
    );
    lock.write();
    return lock;
  }

  /** Records the port once the gateway listens, so a second start can say where the first one is. */
  setPort(port: number): void {
    this.holder = { ...this.holder, port };
    this.write();
  }

  /** Drops the lock (the file stays; the next start overwrites it). */
  release(): void {
    if (this.fd < 0) return;
    const fd = this.fd;
    this.fd = -1;
    closeSync(fd);
  }

  private write(): void {
    ftruncateSync(this.fd, 0);
    // 'a+' appends: after the truncation that is the start of the file.
    writeSync(this.fd, `${JSON.stringify(this.holder)}\n`);
  }
}

function readHolder(path: string): LockHolder | null {
  try {
    const parsed = LockHolder.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
