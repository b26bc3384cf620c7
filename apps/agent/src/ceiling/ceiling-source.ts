import { type FSWatcher, readFileSync, statSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import {
  type Ceiling,
  CLOSED_CEILING,
  checkCeilingFileMode,
  DEFAULT_CEILING,
  parseCeilingToml,
} from '@letkite/ceiling';
import { isLetKiteError } from '@letkite/protocol';

/** The ceiling in force and where it came from. `error` means fail closed: every request is refused. */
export type CeilingState =
  | { source: 'file'; ceiling: Ceiling; path: string }
  | { source: 'defaults'; ceiling: Ceiling; path: string }
  | { source: 'error'; ceiling: Ceiling; path: string; error: string };

interface Fingerprint {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  mode: number;
  uid: number;
}

/**
 * Reads `/etc/letkite/ceiling.toml` (or the path given) and keeps it current: every request calls `current()`,
 * which re-stats the file and reloads it when anything about it changed, so an edit applies to the next request
 * without a restart. Missing file: documented defaults. Unreadable, invalid, wrong owner, or writable by anyone
 * but its owner: fail closed with the reason.
 */
export class CeilingSource {
  private state: CeilingState;
  private fingerprint: Fingerprint | null = null;
  private watcher: FSWatcher | null = null;

  constructor(
    readonly path: string,
    /** Owners the file may have: root, plus the agent's own uid when it does not run as root. */
    private readonly expectedUids: readonly number[],
    private readonly log: (msg: string) => void = () => {},
  ) {
    this.state = this.load();
  }

  current(): CeilingState {
    const fp = this.stat();
    if (!sameFingerprint(fp, this.fingerprint)) {
      const before = this.state;
      this.state = this.load();
      if (describe(before) !== describe(this.state)) this.announce();
    }
    return this.state;
  }

  /** Calls `onChange` whenever the file changes (for pushing a fresh report to the gateway). */
  watch(onChange: (state: CeilingState) => void): void {
    try {
      // Editors replace files by rename, so watch the directory, not the file.
      this.watcher = watch(dirname(this.path), (_event, name) => {
        if (name === null || name === basename(this.path)) {
          const before = describe(this.state);
          const after = this.current();
          if (describe(after) !== before) onChange(after);
        }
      });
      this.watcher.on('error', () => {});
    } catch {
      this.log(`cannot watch ${dirname(this.path)}; ceiling edits still apply on the next request`);
    }
  }

  close(): void {
    this.watcher?.close();
  }

  private stat(): Fingerprint | null {
    try {
      const s = statSync(this.path);
      return { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, mode: s.mode, uid: s.uid };
    } catch {
      return null;
    }
  }

  private announce(): void {
    const s = this.state;
    if (s.source === 'error') this.log(`ceiling ${s.path}: FAILING CLOSED: ${s.error}`);
    else if (s.source === 'defaults') this.log(`ceiling ${s.path} not found: using the documented defaults`);
    else this.log(`ceiling ${s.path} loaded`);
  }

  private load(): CeilingState {
    const path = this.path;
    this.fingerprint = this.stat();
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return { source: 'defaults', ceiling: DEFAULT_CEILING, path };
      return closed(path, `cannot read the ceiling file: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const problems = checkCeilingFileMode({ uid: stat.uid, mode: stat.mode, expectedUids: this.expectedUids });
    if (problems.length > 0) return closed(path, `${path} ${problems.map((p) => p.message).join('; ')}`);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      return closed(path, `cannot read the ceiling file: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    try {
      return { source: 'file', ceiling: parseCeilingToml(text), path };
    } catch (err) {
      return closed(path, isLetKiteError(err) ? err.message : `invalid ceiling: ${String(err)}`);
    }
  }
}

function closed(path: string, error: string): CeilingState {
  return { source: 'error', ceiling: CLOSED_CEILING, path, error };
}

function sameFingerprint(a: Fingerprint | null, b: Fingerprint | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs &&
    a.mode === b.mode &&
    a.uid === b.uid
  );
}

function describe(s: CeilingState): string {
  return JSON.stringify(s);
}
