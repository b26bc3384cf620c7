import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lchown, lstat, mkdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { type FileEncoding, isLetKiteError, LetKiteError, type WriteFileResult } from '@letkite/protocol';
import { fileModeBits, WriteFileParams } from '@letkite/protocol/ops-files';
import { hashOpenFile } from './file-hash';
import { parseParams } from './parse-params';
import {
  accessOf,
  errnoCode,
  type FileAccess,
  fsError,
  notFound,
  openVerified,
  readOnly,
  resolveForWrite,
} from './resolve-path';

type Owner = { uid: number; gid: number };

function decodeContent(content: string, encoding: FileEncoding): Buffer {
  if (encoding === 'utf8') return Buffer.from(content, 'utf8');
  if (content.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(content)) {
    throw new LetKiteError('invalid_params', 'content is not valid base64');
  }
  return Buffer.from(content, 'base64');
}

function ancestor(path: string, levels: number): string {
  let result = path;
  for (let i = 0; i < levels; i += 1) result = dirname(result);
  return result;
}

function cannotWriteAs(owner: Owner): LetKiteError {
  return new LetKiteError(
    'unsupported',
    `this agent cannot create files for uid ${owner.uid} gid ${owner.gid}: it does not run as root`,
    owner,
  );
}

/** Creates the missing directories one at a time (never through a symlink) and gives them to the run-as account. */
async function createDirectories(
  existing: string,
  names: readonly string[],
  runAs: Owner | undefined,
  requested: string,
) {
  let current = existing;
  for (const name of names) {
    current = join(current, name);
    let created = true;
    try {
      await mkdir(current, { mode: 0o755 });
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw fsError(err, requested);
      created = false; // made by someone else meanwhile; accepted below only if it is a real directory
    }
    const stats = await lstat(current).catch(() => undefined);
    if (!stats?.isDirectory()) throw notFound(requested);
    if (created && runAs && (stats.uid !== runAs.uid || stats.gid !== runAs.gid)) {
      await lchown(current, runAs.uid, runAs.gid).catch((err: unknown) => {
        throw errnoCode(err) === 'EPERM' ? cannotWriteAs(runAs) : err;
      });
    }
  }
}

/** SHA-256 of the file now at `real`, or null when there is none. */
async function currentSha256(real: string, requested: string): Promise<string | null> {
  let handle: FileHandle;
  try {
    handle = await openVerified(real, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0), requested);
  } catch (err) {
    if (isLetKiteError(err, 'not_found')) return null;
    throw err;
  }
  try {
    return (await hashOpenFile(handle)).sha256;
  } finally {
    await handle.close();
  }
}

/**
 * write_file: replaces or creates a regular file atomically.
 *
 * The content goes to a temporary file in the same directory (`.<name>.letkite-<random>.tmp`, created with
 * O_EXCL|O_NOFOLLOW), which gets its mode and owner, is fsynced, and is renamed over the target; the directory is
 * fsynced after. On any failure the temporary file is removed, so the target is either the old or the new file.
 *
 * - `if_sha256` is compared with the file as it is just before the rename (missing counts as a mismatch):
 *   `conflict`, with `details.current_sha256` (null when missing).
 * - Mode: `mode` when given; else an existing file keeps its rwx bits (setuid/setgid/sticky are dropped); else a
 *   new file gets 0666 less the agent's umask.
 * - Owner: an existing file keeps its owner and group (when the agent is root; a non-root agent cannot, and the
 *   file becomes the agent's). A new file and new directories are given to `access.runAs`; a non-root agent asked
 *   to write for another account answers `unsupported`.
 * - A symlink at the path is followed: its target is written. Hard links to the old file keep the old content.
 * - The OS permission bits of the run-as account are not re-checked here: the file rules are the boundary.
 */
export async function writeFile(params: WriteFileParams, access: FileAccess): Promise<WriteFileResult> {
  const input = parseParams(WriteFileParams, params);
  const data = decodeContent(input.content, input.encoding ?? 'utf8');
  if (data.length > access.maxWriteBytes) {
    throw new LetKiteError(
      'too_large',
      `content of ${data.length} bytes is over this machine's write limit of ${access.maxWriteBytes} bytes`,
      { max_bytes: access.maxWriteBytes },
    );
  }
  const target = await resolveForWrite(input.path, access);
  if (target.level !== 'rw') throw readOnly(input.path);
  if (target.stats?.isDirectory()) throw new LetKiteError('invalid_params', `is a directory: "${input.path}"`);
  if (target.stats && !target.stats.isFile()) {
    throw new LetKiteError('invalid_params', `not a regular file: "${input.path}"`);
  }

  const newDirectories = target.missing.slice(0, -1);
  if (newDirectories.length > 0) {
    if (!input.create_dirs) {
      throw new LetKiteError(
        'not_found',
        `no such directory: "${dirname(target.lexical)}" (pass create_dirs: true to create it)`,
      );
    }
    const toCreate: string[] = [];
    for (let up = 1; up <= newDirectories.length; up += 1) {
      for (const spelling of [...target.spellings, target.real]) toCreate.push(ancestor(spelling, up));
    }
    if (accessOf(access, toCreate) !== 'rw') throw readOnly(dirname(target.lexical));
    await createDirectories(ancestor(target.real, newDirectories.length + 1), newDirectories, access.runAs, input.path);
  }

  const directory = dirname(target.real);
  const parent = await openVerified(directory, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0), input.path);
  const temporary = join(
    directory,
    `.${basename(target.real).slice(0, 200)}.letkite-${randomBytes(6).toString('hex')}.tmp`,
  );
  let created = false;
  try {
    const handle = await openVerified(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
      input.path,
      0o666,
    );
    created = true;
    try {
      const owner: Owner | undefined = target.stats ? { uid: target.stats.uid, gid: target.stats.gid } : access.runAs;
      const fresh = await handle.stat();
      if (owner && (fresh.uid !== owner.uid || fresh.gid !== owner.gid)) {
        try {
          await handle.chown(owner.uid, owner.gid);
        } catch (err) {
          if (errnoCode(err) !== 'EPERM' || !target.stats)
            throw errnoCode(err) === 'EPERM' ? cannotWriteAs(owner) : err;
        }
      }
      const mode =
        input.mode !== undefined ? fileModeBits(input.mode) : target.stats ? target.stats.mode & 0o777 : undefined;
      if (mode !== undefined) await handle.chmod(mode);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (input.if_sha256 !== undefined) {
      const current = await currentSha256(target.real, input.path);
      if (current !== input.if_sha256.toLowerCase()) {
        throw new LetKiteError(
          'conflict',
          current === null
            ? `"${input.path}" does not exist, but if_sha256 expected it to`
            : `"${input.path}" changed since it was read (its sha256 is now ${current})`,
          { current_sha256: current },
        );
      }
    }
    await rename(temporary, target.real);
  } catch (err) {
    // Only a file this call created is removed; a failed O_EXCL open means the name was someone else's.
    if (created) await unlink(temporary).catch(() => undefined);
    await parent.close();
    throw fsError(err, input.path);
  }
  await parent.sync().catch(() => undefined); // some filesystems cannot fsync a directory; the rename stands
  await parent.close();
  return { bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') };
}
