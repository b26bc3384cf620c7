import { dirname, join } from 'node:path';
import type { GitStatusCode, GitStatusEntry, GitStatusResult } from '@letkite/protocol';
import { GitStatusParams, gitStatusCodes } from '@letkite/protocol/ops-files';
import { openRepository } from './git-repository';
import { gitFailure, runGit } from './git-run';
import { parseParams } from './parse-params';
import { accessOf, type FileAccess, resolveExisting } from './resolve-path';

/** Most entries one status returns; more sets `truncated`. */
export const maxStatusEntries = 5000;

function statusCode(char: string | undefined): GitStatusCode {
  return (gitStatusCodes as readonly string[]).includes(char ?? '') ? (char as GitStatusCode) : '.';
}

interface Parsed extends Omit<GitStatusResult, 'root' | 'entries' | 'truncated'> {
  entries: GitStatusEntry[];
}

/**
 * Parses `git status --porcelain=v2 --branch -z`: NUL-terminated records; a rename or copy (`2 …`) is followed by
 * one more record holding the original path. Fields are split only as far as the path, which may hold spaces.
 */
export function parsePorcelainV2(output: string): Parsed {
  const parsed: Parsed = { branch: null, head: null, upstream: null, ahead: 0, behind: 0, entries: [] };
  const records = output.split('\0');
  for (let i = 0; i < records.length; i += 1) {
    const record = records[i] as string;
    if (record.startsWith('# ')) {
      const [, key, ...rest] = record.split(' ');
      const value = rest.join(' ');
      if (key === 'branch.oid') parsed.head = value === '(initial)' ? null : value;
      else if (key === 'branch.head') parsed.branch = value === '(detached)' ? null : value;
      else if (key === 'branch.upstream') parsed.upstream = value;
      else if (key === 'branch.ab') {
        const match = /^\+(\d+) -(\d+)$/.exec(value);
        if (match) {
          parsed.ahead = Number(match[1]);
          parsed.behind = Number(match[2]);
        }
      }
      continue;
    }
    const kind = record[0];
    if (kind === '1' || kind === '2' || kind === 'u') {
      // 1 XY sub mH mI mW hH hI path | 2 XY sub mH mI mW hH hI Xscore path | u XY sub m1 m2 m3 mW h1 h2 h3 path
      const fieldsBeforePath = kind === '1' ? 8 : kind === '2' ? 9 : 10;
      const fields = record.split(' ');
      const xy = fields[1] ?? '..';
      const path = fields.slice(fieldsBeforePath).join(' ');
      const entry: GitStatusEntry = { path, index: statusCode(xy[0]), worktree: statusCode(xy[1]) };
      if (kind === '2') {
        i += 1;
        const original = records[i];
        if (original) entry.orig_path = original;
      }
      if (path) parsed.entries.push(entry);
    } else if (kind === '?') {
      parsed.entries.push({ path: record.slice(2), index: '?', worktree: '?' });
    }
  }
  return parsed;
}

/**
 * git_status: branch, ahead/behind and the changed or untracked paths of the repository holding `path` (a file's
 * directory when `path` is a file). Every entry is checked under the repository's real top level; hidden entries
 * are left out, and a rename's original path is dropped when it is hidden. Submodules are ignored (each has its
 * own config, which the hardening could not see). Paths are relative to `root`.
 */
export async function gitStatus(params: GitStatusParams, access: FileAccess): Promise<GitStatusResult> {
  const input = parseParams(GitStatusParams, params);
  const target = await resolveExisting(input.path, access);
  const cwd = target.stats.isDirectory() ? target.real : dirname(target.real);
  const options = { cwd, maxBytes: access.maxReadBytes, runAs: access.runAs };

  // The work tree, git dir, common dir and borrowed object stores, each checked against the file rules.
  const { root } = await openRepository(options, access, input.path);

  const status = await runGit(
    ['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all', '--ignore-submodules=all'],
    { ...options, cwd: root },
  );
  if (status.code !== 0 && !status.truncated) throw gitFailure(status, input.path);
  let text = status.stdout.toString('utf8');
  if (status.truncated) text = text.slice(0, text.lastIndexOf('\0') + 1); // drop the cut record
  const parsed = parsePorcelainV2(text);

  const visible = (relative: string) => accessOf(access, [join(root, relative)]) !== 'none';
  const entries: GitStatusEntry[] = [];
  let truncated = status.truncated;
  for (const entry of parsed.entries) {
    if (!visible(entry.path)) continue;
    if (entries.length >= maxStatusEntries) {
      truncated = true;
      break;
    }
    if (entry.orig_path !== undefined && !visible(entry.orig_path)) {
      const { orig_path: _hidden, ...shown } = entry;
      entries.push(shown);
    } else {
      entries.push(entry);
    }
  }
  return { root, ...parsed, entries, truncated };
}
