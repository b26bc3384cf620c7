import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { gitDiff } from './git-diff';
import { gitStatus } from './git-status';
import { type Area, accessFor, makeArea, refusal } from './test-fixture';

let area: Area;
let hidden: string;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], {
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

async function repoAt(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  await writeFile(join(dir, 'a.txt'), 'one\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

const access = () => accessFor({ roots: { [area.dir]: 'rw' }, deny: [hidden] });

beforeEach(async () => {
  area = await makeArea();
  hidden = join(area.dir, 'hidden');
  await repoAt(join(hidden, 'repo'));
});

afterEach(async () => {
  await area.cleanup();
});

describe('the repository git would read is checked as a whole', () => {
  test('a linked worktree and a .git file pointing at a visible git dir still work', async () => {
    const main = await repoAt(join(area.dir, 'main'));
    git(main, 'worktree', 'add', '-q', join(area.dir, 'linked'));
    await writeFile(join(area.dir, 'linked', 'a.txt'), 'two\n');
    const status = await gitStatus({ path: join(area.dir, 'linked') }, access());
    expect(status.entries.map((e) => e.path)).toEqual(['a.txt']);
    const diff = await gitDiff({ path: join(area.dir, 'linked') }, access());
    expect(diff.diff).toContain('+two');
  });

  test.each([
    [
      'gitdir: into the hidden repository',
      async (dir: string) => {
        await mkdir(dir);
        await writeFile(join(dir, '.git'), `gitdir: ${join(hidden, 'repo', '.git')}\n`);
      },
    ],
    [
      'a relative gitdir: into it',
      async (dir: string) => {
        await mkdir(dir);
        await writeFile(join(dir, '.git'), 'gitdir: ../hidden/repo/.git\n');
      },
    ],
    [
      'a symlinked index',
      async (dir: string) => {
        await repoAt(dir);
        execFileSync('rm', [join(dir, '.git', 'index')]);
        await symlink(join(hidden, 'repo', '.git', 'index'), join(dir, '.git', 'index'));
      },
    ],
    [
      'a symlinked pack directory',
      async (dir: string) => {
        await repoAt(dir);
        execFileSync('rm', ['-r', join(dir, '.git', 'objects', 'pack')]);
        await symlink(join(hidden, 'repo', '.git', 'objects', 'pack'), join(dir, '.git', 'objects', 'pack'));
      },
    ],
    [
      'a relative alternates line',
      async (dir: string) => {
        await repoAt(dir);
        await writeFile(join(dir, '.git', 'objects', 'info', 'alternates'), '../../../hidden/repo/.git/objects\n');
      },
    ],
    [
      'an alternate that borrows from the hidden one',
      async (dir: string) => {
        const middle = await repoAt(join(area.dir, 'middle'));
        await writeFile(
          join(middle, '.git', 'objects', 'info', 'alternates'),
          `${join(hidden, 'repo', '.git', 'objects')}\n`,
        );
        await repoAt(dir);
        await writeFile(join(dir, '.git', 'objects', 'info', 'alternates'), `${join(middle, '.git', 'objects')}\n`);
      },
    ],
    [
      'a C-quoted alternates line',
      async (dir: string) => {
        await repoAt(dir);
        await writeFile(join(dir, '.git', 'objects', 'info', 'alternates'), '"/tmp/x"\n');
      },
    ],
  ])('%s answers like a missing repository', async (_what, build) => {
    const dir = join(area.dir, 'visible');
    await build(dir);
    for (const call of [() => gitStatus({ path: dir }, access()), () => gitDiff({ path: dir }, access())]) {
      const r = await refusal(call());
      expect(r.code).toBe('not_found');
      expect(JSON.stringify(r)).not.toContain('hidden');
    }
  });
});
