import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';

/**
 * Path patterns of `files` and `deny` entries. A pattern is one of
 *   `*`            everything
 *   `/abs/path`    an absolute path, segments may hold globs: `*` and `?` (within one segment, dot-files
 *                  included), `**` as a whole segment (any number of segments, none included)
 *   `~` or `~/…`   the same, below the home of the run-as account
 *   `**​/…`         the rest at any depth (`**​/*.pem`)
 * A pattern covers the paths it matches and everything beneath them, so `~/.ssh` hides `~/.ssh/id_rsa`.
 * `.` and `..` segments are refused: paths are compared after the agent resolved them, so such a pattern could
 * never match and a deny entry written that way would silently protect nothing.
 */
export const PathPattern = z
  .string()
  .min(1)
  .max(4096)
  .superRefine((pattern, ctx) => {
    const problem = patternProblem(pattern);
    if (problem) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(pattern)} ${problem}` });
  });
export type PathPattern = z.infer<typeof PathPattern>;

function patternProblem(pattern: string): string | undefined {
  if (/[\0-\x1f\x7f]/.test(pattern)) return 'contains a control character';
  if (pattern !== '*' && pattern !== '**' && !/^(\/|~$|~\/|\*\*\/)/.test(pattern)) {
    return 'must be "*", an absolute path, "~/…" (home of the run-as account) or "**/…"';
  }
  if (pattern.split('/').some((s) => s === '.' || s === '..')) return 'must not contain "." or ".." segments';
  return undefined;
}

/** Options shared by every path-rule function. */
export interface PathContext {
  /** Absolute home directory of the run-as account; `~` in patterns expands to it. */
  home: string;
  /** Compare case-insensitively (macOS and Windows file systems). */
  ignoreCase?: boolean;
}

/**
 * Splits an absolute, normalised path into segments. Throws `invalid_params` for a relative path or one holding
 * `.`/`..` segments or NUL: the caller must resolve paths first (the agent uses realpath), and guessing here
 * could let `..` walk out of an allowed tree.
 */
export function pathSegments(path: string, what = 'path'): string[] {
  if (!path.startsWith('/')) {
    throw new LetKiteError('invalid_params', `${what} ${JSON.stringify(path)} is not absolute`, { path });
  }
  if (path.includes('\0')) throw new LetKiteError('invalid_params', `${what} contains NUL`, { path });
  const segments = path.split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '.' || s === '..')) {
    throw new LetKiteError('invalid_params', `${what} ${JSON.stringify(path)} is not normalised`, { path });
  }
  return segments;
}

/** A pattern prepared for matching: its segments after `~` expansion and how literal it is. */
interface CompiledPattern {
  segments: string[];
  /** Characters that are not wildcards: among patterns matching at the same depth, more literal wins. */
  literal: number;
}

function compile(pattern: string, ctx: PathContext): CompiledPattern {
  let expanded = pattern;
  if (pattern === '*') expanded = '/';
  else if (pattern === '~' || pattern.startsWith('~/')) expanded = `${ctx.home}/${pattern.slice(1)}`;
  if (ctx.ignoreCase) expanded = expanded.toLowerCase();
  const segments = expanded.split('/').filter((s) => s !== '');
  const literal = segments.reduce((n, s) => n + (s === '**' ? 0 : s.replace(/[*?]/g, '').length), 0);
  return { segments, literal };
}

function segmentMatches(pattern: string, segment: string): boolean {
  if (!/[*?]/.test(pattern)) return pattern === segment;
  const source = pattern.replace(/[.+^${}()|[\]\\*?]/g, (c) => (c === '*' ? '.*' : c === '?' ? '.' : `\\${c}`));
  return new RegExp(`^${source}$`, 's').test(segment);
}

/** Whether the pattern's segments match exactly `path` (memoised so repeated `**` stays linear-ish). */
function matchesExactly(pattern: readonly string[], path: readonly string[]): boolean {
  const failed = new Set<number>();
  const width = path.length + 1;
  const go = (pi: number, xi: number): boolean => {
    if (failed.has(pi * width + xi)) return false;
    let ok: boolean;
    const p = pattern[pi];
    if (p === undefined) ok = xi === path.length;
    else if (p === '**') {
      ok = false;
      for (let k = xi; k <= path.length && !ok; k++) ok = go(pi + 1, k);
    } else {
      const x = path[xi];
      ok = x !== undefined && segmentMatches(p, x) && go(pi + 1, xi + 1);
    }
    if (!ok) failed.add(pi * width + xi);
    return ok;
  };
  return go(0, 0);
}

/** Where a pattern covers a path: the depth of the deepest ancestor-or-self it matches, and its literalness. */
export interface PatternCover {
  depth: number;
  literal: number;
}

/**
 * How a pattern covers `segments` (from `pathSegments`), or `undefined` when it does not. The deepest matching
 * ancestor counts, so `/srv/app` (depth 2) is more specific for `/srv/app/x` than `*` (depth 0).
 */
export function patternCovers(
  pattern: string,
  segments: readonly string[],
  ctx: PathContext,
): PatternCover | undefined {
  const compiled = compile(pattern, ctx);
  const path = ctx.ignoreCase ? segments.map((s) => s.toLowerCase()) : segments;
  for (let depth = path.length; depth >= 0; depth--) {
    if (matchesExactly(compiled.segments, path.slice(0, depth))) return { depth, literal: compiled.literal };
  }
  return undefined;
}

/** Checks the home directory once, so a bad one fails loudly instead of making `~` patterns match nothing. */
export function checkHome(home: string): void {
  pathSegments(home, 'home directory');
}
