import { chmodSync, linkSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ceilingWritableBy } from '../ceiling/ceiling-trust';
import {
  agentProtectedPaths,
  expandProtected,
  identitiesOf,
  isProtectedInode,
  isProtectedPath,
} from './protected-paths';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'letkite-protected-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('protected paths', () => {
  test('the agent protects its ceiling, the ceiling’s directory, its state, its own process and what it is told', () => {
    const list = agentProtectedPaths({ ceilingPath: '/srv/x/ceiling.toml', stateDir: '/var/x', extra: ['/d'] });
    expect(list).toEqual(
      expect.arrayContaining([
        '/etc/letkite',
        '/var/lib/letkite',
        `/proc/${process.pid}`,
        '/srv/x/ceiling.toml',
        '/srv/x',
        '/var/x',
        '/d',
      ]),
    );
  });

  test.each([
    ['/data', true],
    ['/data/owner-token', true],
    ['/data/agent/agent.json', true],
    ['/database', false],
    ['/dat', false],
    ['/', false],
  ])('%s under /data: %s', (path, hit) => {
    expect(isProtectedPath(path, ['/data'])).toBe(hit);
  });

  test('a protected path reached through a symlinked parent is protected by its real path too', () => {
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const list = expandProtected([join(dir, 'link', 'data')]);
    mkdirSync(join(dir, 'real', 'data'));
    const again = expandProtected([join(dir, 'link', 'data')]);
    expect(list).toEqual([join(dir, 'link', 'data')]);
    expect(again).toContain(join(dir, 'real', 'data'));
  });

  test('a thread of a protected process is that process', () => {
    expect(isProtectedPath(`/proc/${process.pid}/environ`, [`/proc/${process.pid}`])).toBe(true);
    expect(isProtectedPath('/proc/1/environ', [`/proc/${process.pid}`])).toBe(false);
  });

  test('a hard link to a protected file is recognised by its inode; a file with one name needs no scan', () => {
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'token'), 'secret');
    writeFileSync(join(dir, 'other'), 'x');
    expect(isProtectedInode(statSync(join(dir, 'other')), [join(dir, 'data')])).toBe(false);
    linkSync(join(dir, 'data', 'token'), join(dir, 'alias'));
    expect(isProtectedInode(statSync(join(dir, 'alias')), [join(dir, 'data')])).toBe(true);
    linkSync(join(dir, 'other'), join(dir, 'other-alias'));
    expect(isProtectedInode(statSync(join(dir, 'other-alias')), [join(dir, 'data')])).toBe(false);
  });

  test('directories are pinned by identity, files are not (an edit replaces the ceiling by rename)', () => {
    mkdirSync(join(dir, 'state'));
    writeFileSync(join(dir, 'state', 'ceiling.toml'), '');
    const ids = identitiesOf([join(dir, 'state'), join(dir, 'state', 'ceiling.toml'), '/proc/1']);
    expect([...ids.keys()]).toEqual([join(dir, 'state')]);
  });
});

describe('a ceiling its run-as account could change', () => {
  const self = { uid: process.getuid?.() ?? 0, gids: [] as number[] };
  const other = { uid: 4242, gids: [4242] };

  test('a file or a directory on its path owned by the account', () => {
    writeFileSync(join(dir, 'ceiling.toml'), '');
    expect(ceilingWritableBy(join(dir, 'ceiling.toml'), self)).toMatch(/the ceiling file is owned by uid/);
  });

  test('a directory on its path writable by everyone, unless it is sticky', () => {
    mkdirSync(join(dir, 'open'));
    writeFileSync(join(dir, 'open', 'ceiling.toml'), '');
    chmodSync(dir, 0o700);
    chmodSync(join(dir, 'open'), 0o777);
    expect(ceilingWritableBy(join(dir, 'open', 'ceiling.toml'), other)).toMatch(/directory .*open is writable/);
    chmodSync(join(dir, 'open'), 0o1777);
    expect(ceilingWritableBy(join(dir, 'open', 'ceiling.toml'), other)).toBeNull();
  });
});
