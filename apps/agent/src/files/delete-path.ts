import { constants, type Stats } from 'node:fs';
import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type DeletePathResult, type DirentType, LetKiteError } from '@letkite/protocol';
import { DeletePathParams } from '@letkite/protocol/ops-files';
import { parseParams } from './parse-params';
import {
  accessOf,
  directoryPath,
  errnoCode,
  type FileAccess,
  fsError,
  isFilesystemRoot,
  openVerified,
  readOnly,
  resolveExisting,
} from './resolve-path';

/** Most entries one recursive delete removes; a bigger tree answers `too_large`. */
export const maxDeleteEntries = 100_000;

function typeOf(stats: Stats): DirentType {
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isDirectory()) return 'dir';
  if (stats.isFile()) return 'file';
  return 'other';
}

interface Planned {
  real: string;
  directory: boolean;
  dev: number;
  ino: number;
}

function holdsProtectedEntries(path: string): LetKiteError {
  // Deliberately names no entry: some of them may be hidden from the caller.
  return new LetKiteError('blocked_by_policy', `"${path}" holds entries the file policy does not allow deleting`);
}

/**
 * Every entry under a directory, children before their parent, each checked `rw` under every spelling. Nothing
 * is followed: a symlink is an entry to unlink, not a directory to enter.
 */
async function planTree(top: { spellings: string[]; real: string; requested: string }, access: FileAccess) {
  const plan: Planned[] = [];
  async function visit(real: string, relative: string, stats: Stats): Promise<void> {
    if (plan.length >= maxDeleteEntries) {
      throw new LetKiteError('too_large', `"${top.requested}" holds more than ${maxDeleteEntries} entries`, {
        max_entries: maxDeleteEntries,
      });
    }
    const spellings = top.spellings.map((spelling) => (relative === '' ? spelling : join(spelling, relative)));
    if (accessOf(access, [...spellings, real]) !== 'rw') throw holdsProtectedEntries(top.requested);
    if (stats.isDirectory()) {
      const handle = await openVerified(real, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0), top.requested);
      try {
        const base = await directoryPath(handle, real);
        for (const name of (await readdir(base)).sort()) {
          const child = await lstat(join(base, name)).catch(() => undefined);
          if (child) await visit(join(real, name), relative === '' ? name : join(relative, name), child);
        }
      } finally {
        await handle.close();
      }
    }
    plan.push({ real, directory: stats.isDirectory(), dev: stats.dev, ino: stats.ino });
  }
  const stats = await lstat(top.real);
  await visit(top.real, '', stats);
  return plan;
}

/** Removes planned entries, re-checking that each is still the entry that was planned before removing it. */
async function removePlanned(plan: readonly Planned[], requested: string): Promise<void> {
  for (const entry of plan) {
    const parent = await lstat(dirname(entry.real)).catch(() => undefined);
    const now = await lstat(entry.real).catch(() => undefined);
    if (now === undefined) continue; // already gone
    if (!parent?.isDirectory() || now.dev !== entry.dev || now.ino !== entry.ino) {
      throw new LetKiteError('conflict', `"${requested}" changed while it was being deleted`);
    }
    try {
      if (entry.directory) await rmdir(entry.real);
      else await unlink(entry.real);
    } catch (err) {
      if (errnoCode(err) === 'ENOTEMPTY' || errnoCode(err) === 'EEXIST') {
        throw new LetKiteError('conflict', `"${requested}" changed while it was being deleted`);
      }
      throw fsError(err, requested);
    }
  }
}

/**
 * delete_path: removes a file, a symlink (never its target), or with `recursive: true` a directory tree.
 *
 * - A directory without `recursive: true` answers `invalid_params` with the hint.
 * - Removing an entry changes its parent directory, so the parent must be `rw` too: this is what keeps the top
 *   of an allowed area (whose parent the rules do not grant) and `/` from ever being deleted (`blocked_by_policy`).
 * - A tree is checked whole before anything is removed: one entry that is read-only or hidden refuses the call
 *   with `blocked_by_policy`, naming no entry (the refusal can tell the caller the tree holds something it cannot
 *   see, but never what or where).
 */
export async function deletePath(params: DeletePathParams, access: FileAccess): Promise<DeletePathResult> {
  const input = parseParams(DeletePathParams, params);
  const target = await resolveExisting(input.path, access, { followFinal: false });
  if (isFilesystemRoot(target.real) || isFilesystemRoot(target.lexical)) {
    throw new LetKiteError('blocked_by_policy', `refusing to delete the filesystem root "${input.path}"`);
  }
  if (target.level !== 'rw') throw readOnly(input.path);
  const parents = [...target.spellings, target.real].map((path) => dirname(path));
  if (accessOf(access, parents) !== 'rw') {
    throw new LetKiteError(
      'blocked_by_policy',
      `"${input.path}" is the top of an area the file policy allows; it cannot be deleted`,
    );
  }
  const type = typeOf(target.stats);
  if (type !== 'dir') {
    try {
      await unlink(target.real);
    } catch (err) {
      throw fsError(err, input.path);
    }
    return { deleted: true, type };
  }
  if (!input.recursive) {
    throw new LetKiteError(
      'invalid_params',
      `is a directory: "${input.path}"; pass recursive: true to delete it with everything in it`,
    );
  }
  const plan = await planTree(target, access);
  await removePlanned(plan, input.path);
  return { deleted: true, type };
}
