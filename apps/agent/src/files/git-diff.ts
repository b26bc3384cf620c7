import { dirname, isAbsolute, join, normalize, relative, resolve } from 'node:path';
import { type GitDiffResult, LetKiteError } from '@letkite/protocol';
import { GitDiffParams } from '@letkite/protocol/ops-files';
import { openRepository } from './git-repository';
import { gitFailure, runGit } from './git-run';
import { parseParams } from './parse-params';
import { accessOf, type FileAccess, resolveExisting } from './resolve-path';

/** Most files one diff covers; more sets `truncated` (the pathspecs travel on git's command line). */
export const maxDiffFiles = 2000;

const diffFlags = ['--no-ext-diff', '--no-textconv', '--no-color', '--no-renames', '--ignore-submodules=all'];

/** A pathspec git takes literally (no glob, no magic) relative to the repository's top level. */
function literalFromTop(relativePath: string): string {
  return `:(top,literal)${relativePath}`;
}

/**
 * git_diff: the unified diff of work tree against index (default), index against HEAD (`staged`), or against
 * `ref`. The changed files are listed first (`--name-only`), the ones the file rules hide are dropped, and the
 * diff is then asked for exactly the visible ones, so hidden content never leaves git. Renames are shown as a
 * delete and an add, so a file moved out of a hidden place shows no hidden name. The output is capped at
 * `access.maxReadBytes`, cut at a line end, with `truncated`.
 */
export async function gitDiff(params: GitDiffParams, access: FileAccess): Promise<GitDiffResult> {
  const input = parseParams(GitDiffParams, params);
  const target = await resolveExisting(input.path, access);
  const isDirectory = target.stats.isDirectory();
  const cwd = isDirectory ? target.real : dirname(target.real);
  const options = { cwd, maxBytes: access.maxReadBytes, runAs: access.runAs };

  // The work tree, git dir, common dir and borrowed object stores, each checked against the file rules.
  const { root } = await openRepository(options, access, input.path);

  // Pathspecs the caller asked for, relative to the top level (a file given as `path` limits the diff to it).
  const lexicalDir = isDirectory ? target.lexical : dirname(target.lexical);
  const asked = input.paths ?? (isDirectory ? [] : [target.lexical]);
  const scope = asked.map((path) => {
    const absolute = isAbsolute(path) ? resolve(path) : resolve(lexicalDir, path);
    const fromTop = normalize(join(relative(root, cwd), relative(lexicalDir, absolute)));
    if (fromTop === '..' || fromTop.startsWith('../')) {
      throw new LetKiteError('invalid_params', `not inside the repository: "${path}"`);
    }
    return literalFromTop(fromTop === '.' ? '' : fromTop);
  });

  const selection = [...(input.staged ? ['--cached'] : []), ...(input.ref ? [input.ref] : [])];
  const names = await runGit(['diff', ...diffFlags, '--name-only', '-z', ...selection, '--', ...scope], {
    ...options,
    cwd: root,
    maxBytes: 16 * 1024 * 1024,
  });
  if (names.code !== 0) {
    if (input.ref && /unknown revision|bad revision|ambiguous argument/i.test(names.stderr)) {
      throw new LetKiteError('invalid_params', `unknown revision: "${input.ref}"`);
    }
    throw gitFailure(names, input.path);
  }
  const visible = names.stdout
    .toString('utf8')
    .split('\0')
    .filter((name) => name !== '' && accessOf(access, [join(root, name)]) !== 'none');
  let truncated = names.truncated || visible.length > maxDiffFiles;
  if (visible.length === 0) return { diff: '', truncated };

  const diff = await runGit(
    ['diff', ...diffFlags, ...selection, '--', ...visible.slice(0, maxDiffFiles).map(literalFromTop)],
    { ...options, cwd: root },
  );
  if (diff.code !== 0 && !diff.truncated) throw gitFailure(diff, input.path);
  let text = diff.stdout.toString('utf8');
  if (diff.truncated) {
    truncated = true;
    text = text.slice(0, text.lastIndexOf('\n') + 1);
  }
  return { diff: text, truncated };
}
