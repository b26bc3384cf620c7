import { spawn } from 'node:child_process';
import { LetKiteError } from '@letkite/protocol';

/**
 * Running git on a repository the caller may not trust. A repository's own config can name programs git runs
 * (fsmonitor, filters, external diff, textconv, pager, hooks …); every such door is shut here so that reading a
 * status or a diff never executes anything the repository chose:
 * - no system or global config, a fixed PATH and a clean environment (no inherited GIT_* variables);
 * - `-c` overrides, which beat the repository's config: no fsmonitor, no external diff, `cat` as pager, hooks
 *   pointed at /dev/null, and every `filter.<name>` the repository defines emptied (clean, smudge, process);
 * - `--no-optional-locks` so status never writes the index.
 * Callers add `--no-ext-diff --no-textconv` to diffs and `--ignore-submodules=all` (a submodule has its own config).
 */

/** Where git is looked up: trusted system directories only, never the agent's own PATH. */
const trustedPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/homebrew/bin';

const environment = {
  PATH: trustedPath,
  LC_ALL: 'C',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_ATTR_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
};

const hardening = [
  '--no-pager',
  '--no-optional-locks',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.untrackedCache=false',
  '-c',
  'diff.external=',
  '-c',
  'core.pager=cat',
  '-c',
  'core.hooksPath=/dev/null',
  // Files named by the repository's config are read with the agent's rights: none of them is trusted.
  '-c',
  'core.excludesFile=/dev/null',
  '-c',
  'core.attributesFile=/dev/null',
  '-c',
  'protocol.allow=never',
  '-c',
  'credential.helper=',
  '-c',
  'core.sshCommand=false',
];

export interface GitRun {
  /** Absolute directory git runs in (`-C`). */
  cwd: string;
  /** Most bytes of stdout kept; past it git is stopped and `truncated` set. */
  maxBytes: number;
  runAs?: { uid: number; gid: number } | undefined;
  timeoutMs?: number;
}

export interface GitOutput {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  truncated: boolean;
}

/** Runs git with no shell and the hardening above; resolves with whatever it printed, failing or not. */
function spawnGit(args: readonly string[], options: GitRun, extraConfig: readonly string[]): Promise<GitOutput> {
  // Switching account only works (and only matters) for a root agent; git then also trusts the owner's repos.
  const asRoot = process.getuid?.() === 0;
  const identity = asRoot && options.runAs && options.runAs.uid !== 0 ? options.runAs : undefined;
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', [...hardening, ...extraConfig, '-C', options.cwd, ...args], {
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(identity ? { uid: identity.uid, gid: identity.gid } : {}),
    });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let truncated = false;
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      if (truncated) return;
      const room = options.maxBytes - bytes;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        bytes += room;
        truncated = true;
        child.kill('SIGKILL');
        return;
      }
      chunks.push(chunk);
      bytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 16_384) stderr += chunk.toString('utf8');
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(
        'code' in err && err.code === 'ENOENT'
          ? new LetKiteError('unsupported', 'git is not installed on this machine')
          : err,
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) reject(new LetKiteError('timeout', 'git did not finish in time'));
      else resolvePromise({ code, stdout: Buffer.concat(chunks, bytes), stderr, truncated });
    });
  });
}

/** `-c` overrides emptying every filter driver the repository's config (and what it includes) defines. */
async function neutralizeFilters(options: GitRun): Promise<string[]> {
  const listed = await spawnGit(
    ['config', '--includes', '--null', '--name-only', '--get-regexp', '^filter\\.'],
    { ...options, maxBytes: 1024 * 1024 },
    [],
  );
  // Exit 1 means "no such keys"; anything else still yields whatever names were printed.
  const drivers = new Set<string>();
  for (const key of listed.stdout.toString('utf8').split('\0')) {
    const match = /^filter\.(.+)\.[^.]+$/s.exec(key.trim());
    if (match?.[1]) drivers.add(match[1]);
  }
  if (listed.truncated)
    throw new LetKiteError('unsupported', 'this repository defines too many filters to run git safely');
  return [...drivers].flatMap((name) =>
    ['clean', 'smudge', 'process'].flatMap((key) => ['-c', `filter.${name}.${key}=`]),
  );
}

/** Maps git's refusals to stable codes. Git's own stderr is not passed on: it may name paths the caller cannot see. */
export function gitFailure(output: GitOutput, requested: string): LetKiteError {
  if (/not a git repository/i.test(output.stderr)) {
    return new LetKiteError('not_found', `not a git repository: "${requested}"`);
  }
  if (/dubious ownership|safe\.directory/i.test(output.stderr)) {
    return new LetKiteError(
      'unsupported',
      `git refuses "${requested}": the repository belongs to another account than the one git runs as`,
    );
  }
  return new LetKiteError('internal', `git failed in "${requested}"`);
}

/** Runs one hardened git command in a repository. */
export async function runGit(args: readonly string[], options: GitRun): Promise<GitOutput> {
  const filters = await neutralizeFilters(options);
  return spawnGit(args, options, filters);
}
