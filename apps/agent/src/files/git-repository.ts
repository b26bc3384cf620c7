import type { Dirent } from 'node:fs';
import { readdir, readFile, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { type GitRun, gitFailure, runGit } from './git-run';
import { accessOf, type FileAccess, notFound } from './resolve-path';

/** Alternates of alternates are followed this deep (git itself stops at 5). */
const maxAlternateDepth = 5;
/** Directories of a git dir whose entries git reads by name: each entry is checked when it is a symlink. */
const checkedSubdirs = ['', 'objects', 'objects/pack', 'objects/info', 'info', 'refs', 'refs/heads', 'refs/tags'];

/** Entries of a git dir that status and diff never read (hooks are pointed at /dev/null by the hardening). */
const unreadEntries = new Set(['hooks', 'description']);

/** Where git really reads a repository from. */
export interface Repository {
  /** The work tree's top level (what paths are relative to). */
  root: string;
}

/**
 * Finds the repository holding `cwd` the way git does, then proves that git would read nothing the file rules
 * hide (issue #10 item 8): every config file it reads (includes), the work tree's top level (`core.worktree` can point anywhere), the git dir (a `.git`
 * file's `gitdir:` can point anywhere), the common dir (`commondir`), every object store it borrows
 * (`objects/info/alternates`, recursively) and every symlink inside those directories. Any of them hidden or
 * outside the rules answers exactly like a missing repository, so the answer never tells whether the hidden
 * repository exists.
 */
export async function openRepository(options: GitRun, access: FileAccess, requested: string): Promise<Repository> {
  const located = await runGit(['rev-parse', '--absolute-git-dir', '--git-common-dir', '--show-toplevel'], {
    ...options,
    maxBytes: 64 * 1024,
  });
  if (located.code !== 0 || located.truncated) throw gitFailure(located, requested);
  const [gitDir, commonRaw, root] = located.stdout.toString('utf8').split('\n');
  if (!gitDir || !commonRaw || !root) throw notRepository(requested);
  const commonDir = resolve(options.cwd, commonRaw);

  const paths = new Set<string>([root, gitDir, commonDir, ...(await configFiles(options, requested))]);
  for (const dir of new Set([gitDir, commonDir])) {
    for (const p of await symlinkTargets(dir)) paths.add(p);
  }
  let stores: string[];
  try {
    stores = await alternates(join(commonDir, 'objects'), 0);
  } catch {
    throw notRepository(requested);
  }
  for (const store of stores) {
    paths.add(store);
    for (const p of await symlinkTargets(store, ['', 'pack', 'info'])) paths.add(p);
  }
  const spellings: string[] = [];
  for (const p of paths) {
    spellings.push(p);
    const real = await realpath(p).catch(() => undefined);
    if (real) spellings.push(real);
  }
  if (accessOf(access, spellings) === 'none') throw notRepository(requested);
  return { root };
}

function notRepository(requested: string) {
  return notFound(requested);
}

/** Every config file git reads for this repository (`include.path`, `includeIf` can name any file). */
async function configFiles(options: GitRun, requested: string): Promise<string[]> {
  const listed = await runGit(['config', '--show-origin', '--includes', '--list', '-z'], {
    ...options,
    maxBytes: 4 * 1024 * 1024,
  });
  if (listed.truncated) throw notRepository(requested);
  const files = new Set<string>();
  // -z: origin NUL key LF value NUL, repeated.
  const fields = listed.stdout.toString('utf8').split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i] as string;
    if (origin.startsWith('file:')) files.add(resolve(options.cwd, origin.slice('file:'.length)));
  }
  return [...files];
}

/** Where every symlink among the entries of `dir` (and of its subdirectories git reads by name) leads. */
async function symlinkTargets(dir: string, subdirs: readonly string[] = checkedSubdirs): Promise<string[]> {
  const out: string[] = [];
  for (const sub of subdirs) {
    const base = sub ? join(dir, sub) : dir;
    let entries: Dirent[];
    try {
      entries = await readdir(base, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (!entry.isSymbolicLink() || (sub === '' && unreadEntries.has(entry.name))) continue;
      const link = join(base, entry.name);
      out.push(link);
      const target = await readlink(link).catch(() => undefined);
      if (target !== undefined) out.push(resolve(dirname(link), target));
    }
  }
  return out;
}

/**
 * The object stores `objects/info/alternates` adds, recursively. A line git would read C-quoted, or a chain
 * deeper than git follows, throws: it is refused rather than guessed at.
 */
async function alternates(objectsDir: string, depth: number): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(join(objectsDir, 'info', 'alternates'), 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('"') || depth >= maxAlternateDepth) throw new Error('alternates git reads differently');
    const store = isAbsolute(line) ? resolve(line) : resolve(objectsDir, line);
    out.push(store, ...(await alternates(store, depth + 1)));
  }
  return out;
}
