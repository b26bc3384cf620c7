import { constants, type Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type DirEntry, type DirentType, LetKiteError, type ListDirResult } from '@letkite/protocol';
import { ListDirParams } from '@letkite/protocol/ops-files';
import { parseParams } from './parse-params';
import { accessOf, directoryPath, type FileAccess, openVerified, resolveExisting } from './resolve-path';

/** Most entries one listing returns; more sets `truncated` (keeps a result well inside one frame). */
export const maxListEntries = 2000;

const directoryFlags = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Index of the `}` closing the `{` at `open`, or -1. */
function closingBrace(glob: string, open: number): number {
  let depth = 0;
  for (let i = open; i < glob.length; i += 1) {
    if (glob[i] === '{') depth += 1;
    if (glob[i] === '}') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** Splits a brace body on its top-level commas. */
function alternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i += 1) {
    if (body[i] === '{') depth += 1;
    if (body[i] === '}') depth -= 1;
    if (body[i] === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

function globSource(glob: string): string {
  let source = '';
  for (let i = 0; i < glob.length; i += 1) {
    const char = glob[i] as string;
    if (char === '*' && glob[i + 1] === '*') {
      i += 1;
      if (glob[i + 1] === '/') {
        i += 1;
        source += '(?:.*/)?';
      } else {
        source += '.*';
      }
    } else if (char === '*') {
      source += '[^/]*';
    } else if (char === '?') {
      source += '[^/]';
    } else if (char === '[' && glob.indexOf(']', i + 2) !== -1) {
      const end = glob.indexOf(']', i + 2);
      const body = glob.slice(i + 1, end);
      const negated = body.startsWith('!') || body.startsWith('^');
      source += `[${negated ? '^' : ''}${(negated ? body.slice(1) : body).replace(/[\\\]]/g, '\\$&')}]`;
      i = end;
    } else if (char === '{' && closingBrace(glob, i) !== -1) {
      const end = closingBrace(glob, i);
      source += `(?:${alternatives(glob.slice(i + 1, end))
        .map(globSource)
        .join('|')})`;
      i = end;
    } else {
      source += escapeRegExp(char);
    }
  }
  return source;
}

/**
 * A glob as a matcher: `*` and `?` stay within one path segment, `**` spans segments, `[abc]`/`[!abc]` classes,
 * `{a,b}` alternatives. A glob without `/` is matched against the entry's name, one with `/` against its path
 * relative to the listed directory.
 */
export function globMatcher(glob: string): (relativePath: string, name: string) => boolean {
  let pattern: RegExp;
  try {
    pattern = new RegExp(`^${globSource(glob)}$`, 'u');
  } catch {
    throw new LetKiteError('invalid_params', `not a usable glob: "${glob}"`);
  }
  return glob.includes('/') ? (relativePath) => pattern.test(relativePath) : (_, name) => pattern.test(name);
}

function direntType(stats: Stats): DirentType {
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isDirectory()) return 'dir';
  if (stats.isFile()) return 'file';
  return 'other';
}

interface PendingDir {
  /** The directory as the caller spells it (every spelling its entries must pass). */
  spellings: string[];
  real: string;
  relative: string;
  depth: number;
}

/**
 * list_dir: breadth first, names sorted within each directory, at most `maxListEntries`.
 *
 * Every entry is checked under each spelling of its directory and under its real path; an entry that any of
 * them hides is left out, exactly as if it did not exist. Entries are lstat'ed and never followed: a symlink is
 * listed as `symlink` whatever it points to, and the walk does not descend through it. Directories are read
 * through a verified descriptor so a component swapped for a symlink mid-walk is not followed either; a
 * subdirectory that cannot be read is listed but not descended into.
 */
export async function listDir(params: ListDirParams, access: FileAccess): Promise<ListDirResult> {
  const input = parseParams(ListDirParams, params);
  const top = await resolveExisting(input.path, access);
  if (!top.stats.isDirectory()) {
    throw new LetKiteError('invalid_params', `not a directory: "${input.path}" (use read_file)`);
  }
  const maxDepth = input.depth ?? 1;
  const matches = input.glob === undefined ? () => true : globMatcher(input.glob);
  const entries: DirEntry[] = [];
  const queue: PendingDir[] = [{ spellings: top.spellings, real: top.real, relative: '', depth: 1 }];
  for (let dir = queue.shift(); dir !== undefined; dir = queue.shift()) {
    let handle: Awaited<ReturnType<typeof openVerified>>;
    try {
      handle = await openVerified(dir.real, directoryFlags, input.path);
    } catch (err) {
      if (dir.relative === '') throw err;
      continue;
    }
    try {
      const base = await directoryPath(handle, dir.real);
      const names = (await readdir(base)).sort();
      for (const name of names) {
        if (!input.include_hidden && name.startsWith('.')) continue;
        const real = join(dir.real, name);
        const spellings = dir.spellings.map((spelling) => join(spelling, name));
        if (accessOf(access, [...spellings, real]) === 'none') continue;
        const stats = await lstat(join(base, name)).catch(() => undefined);
        if (stats === undefined) continue; // removed while listing
        const relative = dir.relative === '' ? name : `${dir.relative}/${name}`;
        if (matches(relative, name)) {
          if (entries.length >= maxListEntries) return { entries, truncated: true };
          entries.push({
            path: spellings[0] as string,
            name,
            type: direntType(stats),
            size: stats.size,
            mode: (stats.mode & 0o7777).toString(8).padStart(4, '0'),
            mtime: stats.mtime.toISOString(),
          });
        }
        if (stats.isDirectory() && dir.depth < maxDepth) {
          queue.push({ spellings, real, relative, depth: dir.depth + 1 });
        }
      }
    } finally {
      await handle.close();
    }
  }
  return { entries, truncated: false };
}
