import type { Stats } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { ClampedPolicy } from '@letkite/ceiling';
import { fileAccess, layeredFileAccess, type Policy } from '@letkite/policy';
import { isLetKiteError, LetKiteError } from '@letkite/protocol';
import { type FileAccess, normalizeAbsolute, resolveExisting } from '../files/resolve-path';

/** The parts of a request's policy the working-directory check needs (see `requestPolicy`). */
export interface CwdPolicy {
  policy: Pick<Policy, 'files' | 'deny'>;
  clamped: Pick<ClampedPolicy, 'file_layers' | 'deny'>;
}

/** The file reach of a request, as the file tools see it (policy ∧ ceiling, deny lists, `~` = the account's home). */
function reachOf(rp: CwdPolicy, home: string): FileAccess {
  return {
    access: (path) => layeredFileAccess(path, { layers: rp.clamped.file_layers, deny: rp.clamped.deny, home }),
    maxReadBytes: 0,
    maxWriteBytes: 0,
  };
}

/**
 * The working directory a command, job, shell session or terminal starts in (issue #10 item 4). A directory the
 * file rules hide or leave out could not be read by the command, so starting there is refused — before the disk
 * is touched, so the answer never says whether it exists — with `blocked_by_ceiling` when only the ceiling
 * forbids it, else `blocked_by_policy`. A reachable spelling that leads (through symlinks) somewhere hidden, or
 * nowhere, answers like a missing directory. Returns the real path, which is what the process is started in.
 *
 * Without a requested directory: the account's home when it exists and is reachable, else `/`.
 */
export async function checkCwd(rp: CwdPolicy, requested: string | undefined, home: string): Promise<string> {
  const reach = reachOf(rp, home);
  if (requested === undefined) {
    try {
      const found = await resolveDirectory(home, reach);
      return found.stats.isDirectory() ? found.real : '/';
    } catch {
      return '/';
    }
  }
  if (requested.includes('\0')) throw new LetKiteError('invalid_params', 'cwd must not contain NUL bytes');
  // A relative directory is taken from the account's home, where commands start by default.
  const expanded = requested === '~' ? home : requested.startsWith('~/') ? `${home}${requested.slice(1)}` : requested;
  const lexical = isAbsolute(expanded) ? resolve(expanded) : resolve(home, expanded);
  if (reach.access(lexical) === 'none') throw outsideRules(rp, lexical, requested, home);
  try {
    const found = await resolveDirectory(lexical, reach);
    if (!found.stats.isDirectory()) {
      throw new LetKiteError('invalid_params', `the working directory "${requested}" is not a directory`);
    }
    return found.real;
  } catch (err) {
    if (isLetKiteError(err, 'invalid_params')) throw err;
    throw new LetKiteError('not_found', `no such working directory: "${requested}"`);
  }
}

/**
 * `resolveExisting` for a working directory, with a fast path for the common case: a path without a symlink
 * anywhere on it (its realpath is itself) has one spelling, so the component-by-component lstat walk would check
 * exactly what is checked here (the file rules on that one path, already passed) and find the same real path —
 * one realpath and one lstat instead of an lstat per component. Anything else (a symlink on the way, a missing or
 * unreadable path, protected paths in the reach) takes the full walk, which decides and words the answer. Nothing
 * is cached: the AI controls the path, so it is resolved again on every call.
 */
async function resolveDirectory(path: string, reach: FileAccess): Promise<{ real: string; stats: Stats }> {
  const lexical = normalizeAbsolute(path);
  if (!reach.protectedPaths?.length && reach.access(lexical) !== 'none') {
    const real = await realpath(lexical).catch(() => null);
    if (real === lexical) {
      const stats = await lstat(real).catch(() => null);
      if (stats && !stats.isSymbolicLink()) return { real, stats };
    }
  }
  return resolveExisting(path, reach);
}

function outsideRules(rp: CwdPolicy, lexical: string, requested: string, home: string): LetKiteError {
  const policyAlone = fileAccess(lexical, { files: rp.policy.files, deny: rp.policy.deny, home });
  const byCeiling = policyAlone !== 'none';
  return new LetKiteError(
    byCeiling ? 'blocked_by_ceiling' : 'blocked_by_policy',
    `the working directory "${requested}" is outside what the ${byCeiling ? "machine's ceiling" : 'policy'} lets commands read`,
    { layer: byCeiling ? 'ceiling' : 'policy', key: 'cwd' },
  );
}
