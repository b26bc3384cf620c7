import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { gitDiff } from './git-diff';
import { gitStatus, parsePorcelainV2 } from './git-status';
import { type Area, accessFor, makeArea, refusal } from './test-fixture';

let area: Area;
let repo: string;
let head: string;

/** git as a person would run it here: no hardening at all (used to build the repo and as the control). */
function plainGit(args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: area.dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.invalid',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.invalid',
    },
  });
}

beforeEach(async () => {
  area = await makeArea();
  repo = join(area.dir, 'repo');
  await mkdir(repo);
  plainGit(['init', '-q', '-b', 'main']);
  await writeFile(join(repo, 'a.txt'), 'one\ntwo\n');
  await writeFile(join(repo, '.env'), 'TOKEN=old-secret\n');
  plainGit(['add', '.']);
  plainGit(['commit', '-q', '-m', 'init']);
  head = plainGit(['rev-parse', 'HEAD']).trim();
  await writeFile(join(repo, 'a.txt'), 'one\nTWO\n');
  await writeFile(join(repo, '.env'), 'TOKEN=new-secret\n');
  await writeFile(join(repo, 'b.txt'), 'bee\n');
  plainGit(['add', 'b.txt']);
  await mkdir(join(repo, 'dir with space'));
  await writeFile(join(repo, 'dir with space', 'u.txt'), 'untracked\n');
  await mkdir(join(repo, 'secret'));
  await writeFile(join(repo, 'secret', 'plan.txt'), 'hidden\n');
});
afterEach(() => area.cleanup());

const access = (maxReadBytes = 1024 * 1024) =>
  accessFor({ roots: { [repo]: 'ro' }, deny: [join(repo, '.env'), join(repo, 'secret')], maxReadBytes });

describe('git_status', () => {
  test('reports branch, head and the visible changes; hidden paths are left out', async () => {
    const status = await gitStatus({ path: repo }, access());
    expect(status).toMatchObject({ root: repo, branch: 'main', head, upstream: null, ahead: 0, behind: 0 });
    expect(status.truncated).toBe(false);
    expect(status.entries).toEqual([
      { path: 'a.txt', index: '.', worktree: 'M' },
      { path: 'b.txt', index: 'A', worktree: '.' },
      { path: 'dir with space/u.txt', index: '?', worktree: '?' },
    ]);
  });

  test('a subdirectory, a missing path and a hidden path: status of the repo, not_found, and the same not_found', async () => {
    expect((await gitStatus({ path: join(repo, 'dir with space') }, access())).root).toBe(repo);
    for (const path of [join(repo, 'secret'), join(repo, 'nothing-here')]) {
      expect(await refusal(gitStatus({ path }, access()))).toEqual({
        code: 'not_found',
        message: `no such file: "${path}"`,
        details: undefined,
      });
    }
  });

  test('a directory outside any repository is not_found', async () => {
    await mkdir(join(area.dir, 'plain'));
    const plain = accessFor({ roots: { [area.dir]: 'ro' } });
    expect((await refusal(gitStatus({ path: join(area.dir, 'plain') }, plain))).code).toBe('not_found');
  });
});

describe('git_diff', () => {
  test('work tree against index shows the visible change and never the hidden file', async () => {
    const { diff, truncated } = await gitDiff({ path: repo }, access());
    expect(truncated).toBe(false);
    expect(diff).toContain('-two\n+TWO\n');
    expect(diff).not.toContain('.env');
    expect(diff).not.toContain('secret');
  });

  test('staged shows the index against HEAD; a ref compares against that revision', async () => {
    const staged = await gitDiff({ path: repo, staged: true }, access());
    expect(staged.diff).toContain('+bee');
    expect(staged.diff).not.toContain('TWO');
    const sinceHead = await gitDiff({ path: repo, ref: 'HEAD' }, access());
    expect(sinceHead.diff).toContain('+bee');
    expect(sinceHead.diff).toContain('+TWO');
    expect(sinceHead.diff).not.toContain('secret');
  });

  test('paths limit the diff, and naming a hidden path gives nothing rather than its content', async () => {
    const only = await gitDiff({ path: repo, ref: 'HEAD', paths: ['b.txt'] }, access());
    expect(only.diff).toContain('+bee');
    expect(only.diff).not.toContain('TWO');
    expect((await gitDiff({ path: repo, paths: ['.'] }, access())).diff).toContain('+TWO');
    const fromSubdir = await gitDiff(
      { path: join(repo, 'dir with space'), ref: 'HEAD', paths: ['../a.txt'] },
      access(),
    );
    expect(fromSubdir.diff).toContain('+TWO');
    expect(fromSubdir.diff).not.toContain('bee');
    expect((await refusal(gitDiff({ path: repo, paths: ['../elsewhere'] }, access()))).code).toBe('invalid_params');
    const hidden = await gitDiff({ path: repo, ref: 'HEAD', paths: ['.env', join(repo, '.env')] }, access());
    expect(hidden).toEqual({ diff: '', truncated: false });
  });

  test('output over the read limit is cut at a line end and marked truncated', async () => {
    await writeFile(join(repo, 'a.txt'), `${'line\n'.repeat(2000)}`);
    const { diff, truncated } = await gitDiff({ path: repo }, access(1000));
    expect(truncated).toBe(true);
    expect(diff.length).toBeLessThanOrEqual(1000);
    expect(diff.endsWith('\n')).toBe(true);
  });

  test('an unknown revision is invalid_params; an option smuggled as a ref never reaches git', async () => {
    expect((await refusal(gitDiff({ path: repo, ref: 'no-such-branch' }, access()))).code).toBe('invalid_params');
    expect((await refusal(gitDiff({ path: repo, ref: '--output=/tmp/x' }, access()))).code).toBe('invalid_params');
  });
});

describe('a hostile repository config', () => {
  test('runs nothing through git_status or git_diff (while plain git would)', async () => {
    const marker = (name: string) => join(area.dir, `pwned-${name}`);
    await appendFile(
      join(repo, '.git', 'config'),
      [
        '[core]',
        `\tfsmonitor = "touch ${marker('fsmonitor')}; echo"`,
        `\tpager = "touch ${marker('pager')}; cat"`,
        `\thooksPath = "${area.dir}"`,
        '[diff]',
        `\texternal = "touch ${marker('external')}; echo"`,
        '[filter "evil"]',
        `\tclean = "touch ${marker('clean')}; cat"`,
        `\tsmudge = "touch ${marker('smudge')}; cat"`,
        `\tprocess = "touch ${marker('process')}"`,
        '[diff "evil"]',
        `\ttextconv = "touch ${marker('textconv')}; cat"`,
        `\tcommand = "touch ${marker('command')}; echo"`,
        '',
      ].join('\n'),
    );
    await writeFile(join(repo, '.git', 'info', 'attributes'), '* filter=evil diff=evil\n');
    const markers = async () => (await readdir(area.dir)).filter((name) => name.startsWith('pwned-')).sort();

    await gitStatus({ path: repo }, access());
    await gitDiff({ path: repo }, access());
    await gitDiff({ path: repo, ref: 'HEAD' }, access());
    await gitDiff({ path: repo, staged: true }, access());
    expect(await markers()).toEqual([]);

    // The control: the same repository, untouched by the calls above, does run its commands under plain git.
    // (The `process` filter is no real long-running filter, so plain git fails after running it; the diff runs
    // without it to reach the diff driver's command.)
    for (const args of [['status'], ['-c', 'filter.evil.process=', 'diff']]) {
      try {
        plainGit(args);
      } catch {}
    }
    expect(await markers()).toEqual(expect.arrayContaining(['pwned-command', 'pwned-fsmonitor', 'pwned-process']));
  });
});

describe('parsePorcelainV2', () => {
  test('reads headers, ordinary, renamed, unmerged and untracked records, paths with spaces included', () => {
    const output = [
      '# branch.oid 1234abcd',
      '# branch.head feature/x',
      '# branch.upstream origin/feature/x',
      '# branch.ab +2 -3',
      '1 .M N... 100644 100644 100644 aaaa bbbb src/a file.ts',
      '2 R. N... 100644 100644 100644 aaaa aaaa R100 new name.ts',
      'old name.ts',
      'u UU N... 100644 100644 100644 100644 aaaa bbbb cccc both.txt',
      '? new/untracked.txt',
      '',
    ].join('\0');
    expect(parsePorcelainV2(output)).toEqual({
      branch: 'feature/x',
      head: '1234abcd',
      upstream: 'origin/feature/x',
      ahead: 2,
      behind: 3,
      entries: [
        { path: 'src/a file.ts', index: '.', worktree: 'M' },
        { path: 'new name.ts', orig_path: 'old name.ts', index: 'R', worktree: '.' },
        { path: 'both.txt', index: 'U', worktree: 'U' },
        { path: 'new/untracked.txt', index: '?', worktree: '?' },
      ],
    });
  });

  test('an initial, detached state has no head and no branch', () => {
    expect(parsePorcelainV2('# branch.oid (initial)\0# branch.head (detached)\0')).toMatchObject({
      head: null,
      branch: null,
    });
  });
});
