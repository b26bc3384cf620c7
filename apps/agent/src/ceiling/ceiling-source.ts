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
import { expandProtected, identitiesOf } from '../guard/protected-paths';
import { type AccountIds, lookupAccountIds, runAsCouldChangeCeiling } from './ceiling-trust';

/**
 * The ceiling in force and where it came from. `error` means fail closed: every request is refused.
 * `protectedPaths`: the agent's own files (guard/protected-paths.ts), each as named and as its real path; every
 * request's deny list gets them whatever the ceiling says.
 */
export type CeilingState = (
  | { source: 'file'; ceiling: Ceiling; path: string }
  | { source: 'defaults'; ceiling: Ceiling; path: string }
  | { source: 'error'; ceiling: Ceiling; path: string; error: string }
) & { protectedPaths?: readonly string[] };

/** What else the source watches besides the file. */
export interface CeilingSourceOptions {
  /** The agent's own files and directories to keep out of reach (the ceiling file and its directory included). */
  protect?: readonly string[];
  /** Looks up an account for the run-as check (tests pass their own); default: getent + id. */
  lookupAccount?: (name: string) => AccountIds | null;
}

interface Fingerprint {
  /** Identity of each protected directory, and owner and mode of every directory above the file. */
  around: string;
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
 * without a restart. Missing file: documented defaults. Unreadable, invalid, wrong owner, writable by anyone
 * but its owner, changeable by its own run-as account, or a protected directory replaced: fail closed with the
 * reason (docs/design/keys-out-of-reach.md).
 */
export class CeilingSource {
  private state: CeilingState;
  private fingerprint: Fingerprint | null = null;
  private watcher: FSWatcher | null = null;
  private poll: NodeJS.Timeout | null = null;
  private readonly protect: readonly string[];
  /** dev:ino of the ceiling's directory and each protected path when first seen (see `replacedPin`). */
  private readonly pins = new Map<string, string>();
  private readonly lookupAccount: (name: string) => AccountIds | null;

  constructor(
    readonly path: string,
    /** Owners the file may have: root, plus the agent's own uid when it does not run as root. */
    private readonly expectedUids: readonly number[],
    private readonly log: (msg: string) => void = () => {},
    options: CeilingSourceOptions = {},
  ) {
    this.protect = [...new Set([dirname(path), ...(options.protect ?? [])])];
    this.lookupAccount = options.lookupAccount ?? lookupAccountIds;
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
    const check = () => {
      const before = describe(this.state);
      const after = this.current();
      if (describe(after) !== before) onChange(after);
    };
    try {
      // Editors replace files by rename, so watch the directory, not the file.
      this.watcher = watch(dirname(this.path), (_event, name) => {
        if (name === null || name === basename(this.path)) check();
      });
      this.watcher.on('error', () => {});
    } catch {
      this.log(`cannot watch ${dirname(this.path)}; ceiling edits still apply on the next request`);
    }
    // The directories above the file (their owner and mode count too) send no events: look now and then, so a
    // fixed (or newly broken) path is reported even while the gateway holds calls back for the last report.
    this.poll = setInterval(check, CHECK_INTERVAL_MS);
    this.poll.unref();
  }

  close(): void {
    this.watcher?.close();
    if (this.poll) clearInterval(this.poll);
  }

  private stat(): Fingerprint | null {
    const around = [
      ...[...identitiesOf(this.protect)].map(([p, id]) => `${p}=${id}`),
      ...ancestorAttributes(this.path),
    ].join('\n');
    try {
      const s = statSync(this.path);
      return { around, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, mode: s.mode, uid: s.uid };
    } catch {
      return { around, ino: -1, size: 0, mtimeMs: 0, ctimeMs: 0, mode: 0, uid: -1 };
    }
  }

  /**
   * The ceiling's directory and the protected directories are pinned (dev:ino) the first time they are seen: one
   * moved away and replaced by another (say by renaming a parent the run-as account may write) means the file at
   * the ceiling's path is no longer the administrator's, so the agent fails closed until it is restarted.
   */
  private replacedPin(): string | null {
    for (const [p, id] of identitiesOf(this.protect)) {
      const pinned = this.pins.get(p);
      if (pinned === undefined) this.pins.set(p, id);
      else if (pinned !== id) return p;
    }
    return null;
  }

  private announce(): void {
    const s = this.state;
    if (s.source === 'error') this.log(`ceiling ${s.path}: FAILING CLOSED: ${s.error}`);
    else if (s.source === 'defaults') this.log(`ceiling ${s.path} not found: using the documented defaults`);
    else this.log(`ceiling ${s.path} loaded`);
  }

  private load(): CeilingState {
    const protectedPaths = expandProtected(this.protect);
    return { ...this.loadCeiling(), protectedPaths };
  }

  private loadCeiling(): CeilingState {
    const path = this.path;
    this.fingerprint = this.stat();
    const replaced = this.replacedPin();
    if (replaced !== null) {
      return closed(
        path,
        `${replaced} was moved or replaced while the agent runs, so the ceiling cannot be trusted; restore it and restart the agent`,
      );
    }
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
    let ceiling: Ceiling;
    try {
      ceiling = parseCeilingToml(text);
    } catch (err) {
      return closed(path, isLetKiteError(err) ? err.message : `invalid ceiling: ${String(err)}`);
    }
    const writable = this.writableByRunAs(ceiling.run_as);
    if (writable) return closed(path, writable);
    return { source: 'file', ceiling, path };
  }

  /**
   * A ceiling its own run-as account can change is no ceiling: the file, or a directory on its path, owned by or
   * writable by that account fails closed. Skipped when run_as is the agent's own account (the `npm start` case,
   * where that account owns the file anyway): there the protected paths, hidden from the sandbox and refused by
   * the file tools, are what keeps commands away from it.
   */
  private writableByRunAs(runAs: string): string | null {
    return runAsCouldChangeCeiling(this.path, runAs, process.getuid?.() ?? 0, this.lookupAccount);
  }
}

/** How often the file's path is re-checked without an event (owner and mode of the directories above it). */
const CHECK_INTERVAL_MS = 2000;

/** Owner and mode of each directory above `path`: a change there may make the ceiling untrustworthy (or fine). */
function ancestorAttributes(path: string): string[] {
  const out: string[] = [];
  let current = dirname(path);
  for (;;) {
    try {
      const s = statSync(current);
      out.push(`${current}:${s.uid}:${s.gid}:${s.mode}`);
    } catch {
      out.push(`${current}:missing`);
    }
    const parent = dirname(current);
    if (parent === current) return out;
    current = parent;
  }
}

function closed(path: string, error: string): CeilingState {
  return { source: 'error', ceiling: CLOSED_CEILING, path, error };
}

function sameFingerprint(a: Fingerprint | null, b: Fingerprint | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.around === b.around &&
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
