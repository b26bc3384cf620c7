import { lstatSync, readdirSync, readFileSync, realpathSync, type Stats, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { DEFAULT_CEILING_PATH } from '@letkite/ceiling';
import { LetKiteError } from '@letkite/protocol';
import { type AccountIds, lookupAccountIds } from '../ceiling/ceiling-trust';

/**
 * The files the agent trusts, out of reach of every tool whatever the ceiling says (issue #10 item 2): its ceiling
 * file and the ceiling's directory, its state directory (the private key, the job logs, the transfer journal),
 * whatever its launcher asks it to protect (`letkite start` names the gateway's data directory: the owner token,
 * the database, the secret key), and the standard locations of those on any machine. The agent adds them to the
 * deny list of every request (so the sandbox hides them and the file tools leave them out of listings), and the
 * file tools refuse them by name with `blocked_by_ceiling`.
 */
export const STANDARD_PROTECTED_PATHS = [dirname(DEFAULT_CEILING_PATH), '/var/lib/letkite'] as const;

/** The list the agent protects, before symlinks are resolved. */
export function agentProtectedPaths(input: {
  ceilingPath: string;
  stateDir?: string | null | undefined;
  extra?: readonly string[] | undefined;
}): string[] {
  const ceiling = resolve(input.ceilingPath);
  return unique([
    ...STANDARD_PROTECTED_PATHS,
    // The agent's own process: its environment and open descriptors (the file tools run in it).
    `/proc/${process.pid}`,
    ceiling,
    dirname(ceiling),
    ...(input.stateDir ? [resolve(input.stateDir)] : []),
    ...(input.extra ?? []).map((p) => resolve(p)),
  ]);
}

/**
 * Every spelling to refuse: each path as given and, when it exists, its real path (so a protected directory
 * reached through a symlinked parent is still caught, and a request spelled through the real location too).
 */
export function expandProtected(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    out.push(p);
    try {
      out.push(realpathSync(p));
    } catch {
      // Missing: there is nothing to reach yet; the name itself stays protected.
    }
  }
  return unique(out);
}

/**
 * True when `path` (absolute, normalised) is a protected path or lies below one. A protected process
 * (`/proc/<pid>`) is also protected under the id of each of its threads (`/proc/<tid>` is the same process).
 */
export function isProtectedPath(path: string, protectedPaths: readonly string[]): boolean {
  if (protectedPaths.some((p) => path === p || path.startsWith(p.endsWith(sep) ? p : `${p}${sep}`))) return true;
  const id = /^\/proc\/(\d+)(?:\/|$)/.exec(path)?.[1];
  if (id === undefined) return false;
  const tgid = threadGroupOf(id);
  return tgid !== id && protectedPaths.includes(`/proc/${tgid}`);
}

/** The process a /proc id belongs to (itself for a process, its process for a thread; unknown: itself). */
function threadGroupOf(id: string): string {
  try {
    return /^Tgid:\s*(\d+)/m.exec(readFileSync(`/proc/${id}/status`, 'utf8'))?.[1] ?? id;
  } catch {
    return id;
  }
}

/** A path with characters the deny patterns read as a glob cannot be protected by a deny entry. */
export function hasGlobCharacters(path: string): boolean {
  return /[*?[\]{}\\]/.test(path);
}

/** The one refusal for a protected path: says what the path is for, never what it holds. */
export function protectedRefusal(path: string): LetKiteError {
  return new LetKiteError(
    'blocked_by_ceiling',
    `"${path}" belongs to LetKite itself (its keys, state or ceiling) and is out of reach of every tool`,
    { layer: 'ceiling', key: 'protected' },
  );
}

/** How many entries the search for hard links walks in one protected tree before it leaves that tree out. */
const MAX_INODE_SCAN = 5_000;

/**
 * True when `stats` (a file with more than one name) is a file inside a protected tree under another name — a
 * hard link. Directories cannot be hard-linked, and files with one name are what they are called, so only
 * multiply linked files on the same device need the scan. Each tree is scanned on its own and a tree over
 * MAX_INODE_SCAN entries is left out: that is a LetKite checkout protected for its code (a link to a code file
 * writes nothing through write_file, which replaces the name), while the trees that hold keys — the data and
 * state directories, each protected on its own — are small.
 */
export function isProtectedInode(
  stats: Pick<Stats, 'dev' | 'ino' | 'nlink' | 'isFile'>,
  roots: readonly string[],
): boolean {
  if (!stats.isFile() || stats.nlink < 2) return false;
  for (const root of roots) {
    if (isProcessEntry(root)) continue;
    let seen = 0;
    const stack = [root];
    while (stack.length > 0 && seen <= MAX_INODE_SCAN) {
      const p = stack.pop() as string;
      let s: Stats;
      try {
        s = lstatSync(p);
      } catch {
        continue;
      }
      if (s.dev !== stats.dev) continue;
      if (s.ino === stats.ino) return true;
      if (!s.isDirectory()) continue;
      let names: string[];
      try {
        names = readdirSync(p);
      } catch {
        continue;
      }
      seen += names.length;
      for (const name of names) stack.push(join(p, name));
    }
  }
  return false;
}

/** A process's /proc entry: protected from the file tools only, and never pinned (its inode is not stable). */
export function isProcessEntry(path: string): boolean {
  return path === '/proc' || path.startsWith('/proc/');
}

/** Identity of each existing protected directory, so one moved away and replaced is noticed. */
export function identitiesOf(paths: readonly string[]): Map<string, string> {
  const ids = new Map<string, string>();
  for (const p of paths) {
    if (isProcessEntry(p)) continue;
    try {
      // Directories only: a file (the ceiling) is replaced by rename on every edit, and that is fine.
      const s = statSync(p);
      if (s.isDirectory()) ids.set(p, `${s.dev}:${s.ino}`);
    } catch {
      // Not there (yet).
    }
  }
  return ids;
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}

const accounts = new Map<string, { ids: AccountIds | null; at: number }>();
const ACCOUNT_CACHE_MS = 60_000;

/**
 * Whether the run-as account can even name `path` (search permission on every directory above it). One it
 * cannot reach needs no hiding in the sandbox (the command runs with the same rights, and Landlock grants no
 * more), and the helper, running as that account, could not resolve it to hide it anyway. Root, an unknown
 * account, or a path that cannot be checked: true (hide it).
 */
export function reachableBy(path: string, runAs: string, now = Date.now()): boolean {
  let hit = accounts.get(runAs);
  if (!hit || now - hit.at > ACCOUNT_CACHE_MS) {
    hit = { ids: lookupAccountIds(runAs), at: now };
    accounts.set(runAs, hit);
  }
  const ids = hit.ids;
  if (!ids || ids.uid === 0) return true;
  let current = dirname(path);
  for (;;) {
    let s: Stats;
    try {
      s = statSync(current);
    } catch {
      return true;
    }
    const bit = s.uid === ids.uid ? 0o100 : ids.gids.includes(s.gid) ? 0o010 : 0o001;
    if ((s.mode & bit) === 0) return false;
    const parent = dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}
