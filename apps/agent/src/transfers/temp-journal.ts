import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';

/** The name a transfer's temporary file or directory gets next to its destination. */
export function transferTempName(finalName: string): string {
  return `.${finalName.slice(0, 200)}.letkite-xfer-${randomBytes(6).toString('hex')}.tmp`;
}

const tempPattern = /^\..*\.letkite-xfer-[0-9a-f]{12}\.tmp$/s;

/**
 * Remembers, in the agent's state directory, the temporary copies of transfers still being received. A transfer
 * that ends removes its own; the ones an agent that was killed mid-transfer leaves behind are removed when the
 * agent starts again (`cleanStale`). Without a state directory nothing is remembered.
 */
export class TempJournal {
  private readonly dir: string | null;

  constructor(stateDir: string | null) {
    this.dir = stateDir === null ? null : join(stateDir, 'transfers-in-progress');
  }

  /** Records `tempPath` before it is created; returns the forget function to call once it is gone or renamed. */
  record(tempPath: string): () => void {
    if (this.dir === null) return () => undefined;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const entry = join(this.dir, `${randomBytes(8).toString('hex')}.json`);
    writeFileSync(entry, JSON.stringify({ path: tempPath }), { mode: 0o600 });
    return () => rmSync(entry, { force: true });
  }

  /** Removes every temporary copy a previous run left behind. Returns the paths removed. */
  cleanStale(log: (msg: string) => void): string[] {
    if (this.dir === null) return [];
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const removed: string[] = [];
    for (const name of names) {
      const entry = join(this.dir, name);
      try {
        const { path } = JSON.parse(readFileSync(entry, 'utf8')) as { path?: unknown };
        // Only ever a transfer's own temporary name: a tampered journal cannot make the agent delete anything else.
        if (typeof path === 'string' && isAbsolute(path) && tempPattern.test(basename(path))) {
          rmSync(path, { recursive: true, force: true });
          removed.push(path);
        }
      } catch (err) {
        log(`transfer journal ${entry}: ${String(err)}`);
      }
      try {
        unlinkSync(entry);
      } catch {
        // gone already
      }
    }
    if (removed.length > 0) log(`removed ${removed.length} unfinished transfer copy(ies) left by a previous run`);
    return removed;
  }
}
