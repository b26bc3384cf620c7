import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, readlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse, resolve, sep } from 'node:path';
import { LetKiteError } from '@letkite/protocol';
import { isProtectedInode, isProtectedPath, protectedRefusal } from '../guard/protected-paths';

/** What the file rules give one path, least first. `none` covers both "outside every root" and "denied". */
export type AccessLevel = 'none' | 'ro' | 'rw';

/**
 * The reach of the file tools for one request, built by the caller from the effective policy ∧ ceiling
 * (`files`, `deny`, `~`). `access(path)` must answer for a path as a whole: a denied directory denies what is
 * inside it. The operations call it on every spelling of a path (as asked, and after each symlink) and use the
 * strictest answer.
 */
export interface FileAccess {
  access(path: string): AccessLevel;
  /** Largest window read_file returns, and the cap of git output. */
  maxReadBytes: number;
  /** Largest content write_file accepts. */
  maxWriteBytes: number;
  /** The run-as account: new files and directories are given to it, git runs as it (when the agent is root). */
  runAs?: { uid: number; gid: number };
  /**
   * The agent's own files (guard/protected-paths.ts), each as named and as its real path. A path that is one of
   * them, lies below one, reaches one through a symlink, or is a hard link to a file in one is refused with
   * `blocked_by_ceiling` (`access` must also answer `none` for them, so listings leave them out).
   */
  protectedPaths?: readonly string[];
}

const rank: Record<AccessLevel, number> = { none: 0, ro: 1, rw: 2 };

/** The strictest level `access` gives any of the paths; an answer that is not a level counts as `none`. */
export function accessOf(access: FileAccess, paths: readonly string[]): AccessLevel {
  let level: AccessLevel = 'rw';
  for (const path of paths) {
    const answer = access.access(path);
    if (!Object.hasOwn(rank, answer)) return 'none';
    if (rank[answer] < rank[level]) level = answer;
  }
  return level;
}

/**
 * The one answer for a path that is missing or hidden. Hidden and missing must not be told apart, so this is
 * the only message either gets, and it carries no details.
 */
export function notFound(path: string): LetKiteError {
  return new LetKiteError('not_found', `no such file: "${path}"`);
}

/** The OS refused a visible path (the agent's own account lacks the permission). */
export function permissionDenied(path: string): LetKiteError {
  return new LetKiteError('forbidden', `permission denied by the operating system: "${path}"`);
}

/** A visible path the file rules let the caller read but not change. */
export function readOnly(path: string): LetKiteError {
  return new LetKiteError('blocked_by_policy', `the file policy does not allow changing "${path}"`, {
    access: 'ro',
  });
}

/** Refuses a path any spelling of which is protected, and a file that is a hard link into a protected tree. */
function assertNotProtected(access: FileAccess, requested: string, spellings: readonly string[], stats?: Stats): void {
  const protectedPaths = access.protectedPaths ?? [];
  if (protectedPaths.length === 0) return;
  if (spellings.some((p) => isProtectedPath(p, protectedPaths))) throw protectedRefusal(requested);
  if (stats && isProtectedInode(stats, protectedPaths)) throw protectedRefusal(requested);
}

/** `path` made absolute-normalised: `.`, `..` and repeated separators collapse lexically, before any lookup. */
export function normalizeAbsolute(path: string): string {
  if (path.includes('\0')) throw new LetKiteError('invalid_params', 'a path must not contain NUL bytes');
  if (!isAbsolute(path)) throw new LetKiteError('invalid_params', `path must be absolute: "${path}"`);
  return resolve(path);
}

/** True for `/` (or a drive root on Windows). */
export function isFilesystemRoot(path: string): boolean {
  return parse(path).root === path;
}

/** The error code of a failed system call, if it has one. */
export function errnoCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function components(path: string): string[] {
  return path.split(sep === '\\' ? /[\\/]/ : '/').filter((part) => part !== '' && part !== '.');
}

const maxSymlinks = 40;

/** How a path was reached: its real location, and every name it was reached by. */
interface Walk {
  /** The path with every symlink resolved (the final one only when following), plus any missing tail. */
  real: string;
  /** The normalised request, then the whole path again after each symlink was substituted. */
  spellings: string[];
  /** Components below the last existing directory that do not exist (empty when the path exists). */
  missing: string[];
}

/**
 * Resolves symlinks one component at a time, like realpath, but keeps every intermediate spelling so that a link
 * into a denied tree (or a denied link) is caught even when the final real path looks harmless. Throws the raw
 * system error (ELOOP, ENOTDIR, EACCES …); callers turn any of them into `notFound`.
 */
async function walk(lexical: string, followFinal: boolean): Promise<Walk> {
  const spellings = [lexical];
  let done = parse(lexical).root;
  let todo = components(lexical.slice(done.length));
  let links = 0;
  while (todo.length > 0) {
    const [name, ...rest] = todo as [string, ...string[]];
    todo = rest;
    if (name === '..') {
      done = dirname(done);
      continue;
    }
    const candidate = join(done, name);
    let stats: Stats;
    try {
      stats = await lstat(candidate);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return { real: join(candidate, ...todo), spellings, missing: [name, ...todo] };
      throw err;
    }
    if (stats.isSymbolicLink() && (todo.length > 0 || followFinal)) {
      links += 1;
      if (links > maxSymlinks) throw Object.assign(new Error('too many symlinks'), { code: 'ELOOP' });
      const target = await readlink(candidate);
      let relativeTarget = target;
      if (isAbsolute(target)) {
        done = parse(target).root;
        relativeTarget = target.slice(done.length);
      }
      todo = [...components(relativeTarget), ...todo];
      spellings.push(resolve(done, ...todo));
      continue;
    }
    if (todo.length > 0 && !stats.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    done = candidate;
  }
  return { real: done, spellings, missing: [] };
}

/** A visible, existing path. */
export interface ResolvedPath {
  /** The path exactly as the caller gave it (used in every message). */
  requested: string;
  /** The request normalised lexically. */
  lexical: string;
  /** Where it really is (the final symlink followed unless `followFinal: false`). */
  real: string;
  /** Every name the path was reached by; each was checked. */
  spellings: string[];
  level: 'ro' | 'rw';
  /** lstat of `real`. */
  stats: Stats;
}

/**
 * Resolves an existing path and checks the file rules on every spelling of it. Missing, hidden, unreachable or
 * looping all answer the same `notFound`. With `followFinal: false` a final symlink is the path itself (delete).
 */
export async function resolveExisting(
  requested: string,
  access: FileAccess,
  { followFinal = true }: { followFinal?: boolean } = {},
): Promise<ResolvedPath> {
  const lexical = normalizeAbsolute(requested);
  assertNotProtected(access, requested, [lexical]);
  // Checked before touching the disk, so no system error can tell a hidden path from a missing one.
  if (access.access(lexical) === 'none') throw notFound(requested);
  let found: Walk;
  let stats: Stats;
  try {
    found = await walk(lexical, followFinal);
    if (found.missing.length > 0) throw notFound(requested);
    stats = await lstat(found.real);
  } catch {
    throw notFound(requested);
  }
  assertNotProtected(access, requested, [...found.spellings, found.real], stats);
  const level = accessOf(access, [...found.spellings, found.real]);
  if (level === 'none') throw notFound(requested);
  return { requested, lexical, real: found.real, spellings: found.spellings, level, stats };
}

/** A visible path to write: existing, or missing below an existing directory. */
export interface WriteTarget {
  requested: string;
  lexical: string;
  /** Where the file will be (every existing symlink on the way followed, the final one too). */
  real: string;
  spellings: string[];
  level: 'ro' | 'rw';
  /** Components below the deepest existing directory that do not exist yet; empty when the file exists. */
  missing: string[];
  /** lstat of `real` when it exists. */
  stats: Stats | undefined;
}

/**
 * Resolves a path to write: the nearest existing ancestor is resolved for real and the missing rest appended. A
 * dangling symlink is followed to where it points, and that place is checked like any other (so the answer never
 * depends on whether a hidden target exists). A missing rest holding `..` (from a link target) answers `notFound`.
 */
export async function resolveForWrite(requested: string, access: FileAccess): Promise<WriteTarget> {
  const lexical = normalizeAbsolute(requested);
  assertNotProtected(access, requested, [lexical]);
  if (access.access(lexical) === 'none') throw notFound(requested);
  let found: Walk;
  let stats: Stats | undefined;
  try {
    found = await walk(lexical, true);
    if (found.missing.includes('..')) throw notFound(requested);
    if (found.missing.length === 0) stats = await lstat(found.real);
  } catch {
    throw notFound(requested);
  }
  assertNotProtected(access, requested, [...found.spellings, found.real], stats);
  const level = accessOf(access, [...found.spellings, found.real]);
  if (level === 'none') throw notFound(requested);
  return { ...found, requested, lexical, level, stats };
}

const noFollow = constants.O_NOFOLLOW ?? 0;

/**
 * Opens a resolved path without following a final symlink, then proves the descriptor is the file that was
 * checked: same device and inode as `real` now, and (where /proc exists) the kernel's own path for the open
 * descriptor equals `real`. This closes the window between resolving and opening in which a component could be
 * swapped for a symlink.
 */
export async function openVerified(real: string, flags: number, requested: string, mode?: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(real, flags | noFollow, mode);
  } catch (err) {
    throw fsError(err, requested);
  }
  try {
    const [opened, named] = await Promise.all([handle.stat(), lstat(real)]);
    if (opened.dev !== named.dev || opened.ino !== named.ino) throw notFound(requested);
    const kernelPath = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
    if (kernelPath !== undefined && kernelPath !== real) throw notFound(requested);
    return handle;
  } catch (err) {
    await handle.close();
    throw fsError(err, requested);
  }
}

/**
 * A path through which an open directory can be read: `/proc/self/fd/N` where it exists (so later lookups go
 * through the verified descriptor, not the name), else the real path.
 */
export async function directoryPath(handle: FileHandle, real: string): Promise<string> {
  const viaFd = `/proc/self/fd/${handle.fd}`;
  const target = await readlink(viaFd).catch(() => undefined);
  return target === real ? viaFd : real;
}

/** Maps a system error on a visible path to a stable code; unknown failures stay unknown (→ internal). */
export function fsError(err: unknown, requested: string): unknown {
  if (err instanceof LetKiteError) return err;
  switch (errnoCode(err)) {
    case 'ENOENT':
    case 'ENOTDIR':
    case 'ELOOP':
    case 'ENAMETOOLONG':
      return notFound(requested);
    case 'EACCES':
    case 'EPERM':
      return permissionDenied(requested);
    default:
      return err;
  }
}
