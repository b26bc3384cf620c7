import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { globMatcher, listDir, maxListEntries } from './list-dir';
import { readFile } from './read-file';
import { type Area, accessFor, makeArea, refusal } from './test-fixture';

let area: Area;
let root: string;
beforeEach(async () => {
  area = await makeArea();
  root = join(area.dir, 'root');
  await mkdir(join(root, 'src', 'deep', 'deeper'), { recursive: true });
  await mkdir(join(root, 'secret'));
  await mkdir(join(root, '.git'));
  await writeFile(join(root, 'README.md'), '# hi');
  await writeFile(join(root, '.env'), 'TOKEN=1');
  await writeFile(join(root, 'src', 'a.ts'), 'a');
  await writeFile(join(root, 'src', 'b.js'), 'b');
  await writeFile(join(root, 'src', 'deep', 'c.ts'), 'c');
  await writeFile(join(root, 'src', 'deep', 'deeper', 'd.ts'), 'd');
  await writeFile(join(root, 'secret', 'token'), 'hunter2');
  await writeFile(join(root, 'server.pem'), 'key');
  await mkdir(join(area.dir, 'outside'));
  await writeFile(join(area.dir, 'outside', 'loot.txt'), 'x');
});
afterEach(() => area.cleanup());

const access = () => accessFor({ roots: { [root]: 'rw' }, deny: [join(root, 'secret')] });
const names = (result: { entries: { path: string }[] }) =>
  result.entries.map((entry) => entry.path.slice(root.length + 1));

describe('list_dir', () => {
  test('lists one level sorted, with type, size, mode and mtime, leaving out dot files by default', async () => {
    await chmod(join(root, 'README.md'), 0o640);
    const result = await listDir({ path: root }, access());
    expect(names(result)).toEqual(['README.md', 'src']);
    expect(result.truncated).toBe(false);
    const readme = result.entries[0];
    expect(readme).toMatchObject({
      path: join(root, 'README.md'),
      name: 'README.md',
      type: 'file',
      size: 4,
      mode: '0640',
    });
    expect(Number.isNaN(Date.parse(readme?.mtime ?? ''))).toBe(false);
    expect(result.entries[1]?.type).toBe('dir');
    const hidden = await listDir({ path: root, include_hidden: true }, access());
    expect(names(hidden)).toEqual(['.env', '.git', 'README.md', 'src']);
  });

  test('denied entries are left out as if they did not exist, and a denied directory is not_found like a missing one', async () => {
    const result = await listDir({ path: root, include_hidden: true, depth: 2 }, access());
    expect(names(result)).not.toContain('secret');
    expect(names(result)).not.toContain('server.pem');
    expect(names(result).some((name) => name.startsWith('secret'))).toBe(false);
    const denied = join(root, 'secret');
    const missing = join(root, 'missing');
    expect(await refusal(listDir({ path: denied }, access()))).toEqual({
      code: 'not_found',
      message: `no such file: "${denied}"`,
      details: undefined,
    });
    expect(await refusal(listDir({ path: missing }, access()))).toEqual({
      code: 'not_found',
      message: `no such file: "${missing}"`,
      details: undefined,
    });
  });

  test('a symlink pointing outside is listed as a symlink, not descended into, and cannot be read through', async () => {
    await symlink(join(area.dir, 'outside'), join(root, 'escape'));
    await symlink('/etc/passwd', join(root, 'passwd'));
    const result = await listDir({ path: root, depth: 3 }, access());
    const escapeLink = result.entries.find((entry) => entry.name === 'escape');
    expect(escapeLink?.type).toBe('symlink');
    expect(result.entries.find((entry) => entry.name === 'passwd')?.type).toBe('symlink');
    expect(names(result).some((name) => name.includes('loot'))).toBe(false);
    expect((await refusal(listDir({ path: join(root, 'escape') }, access()))).code).toBe('not_found');
    expect((await refusal(readFile({ path: join(root, 'escape', 'loot.txt') }, access()))).code).toBe('not_found');
  });

  test('depth limits the descent and a glob filters what is returned but not where the walk goes', async () => {
    expect(names(await listDir({ path: root, depth: 2 }, access()))).toEqual([
      'README.md',
      'src',
      'src/a.ts',
      'src/b.js',
      'src/deep',
    ]);
    expect(names(await listDir({ path: root, depth: 8, glob: '*.ts' }, access()))).toEqual([
      'src/a.ts',
      'src/deep/c.ts',
      'src/deep/deeper/d.ts',
    ]);
    expect(names(await listDir({ path: root, depth: 8, glob: 'src/*/*.ts' }, access()))).toEqual(['src/deep/c.ts']);
  });

  test('a listing over the limit stops there and says it is truncated', async () => {
    await mkdir(join(root, 'many'));
    await Promise.all(Array.from({ length: maxListEntries + 1 }, (_, i) => writeFile(join(root, 'many', `f${i}`), '')));
    const result = await listDir({ path: join(root, 'many') }, access());
    expect(result.entries).toHaveLength(maxListEntries);
    expect(result.truncated).toBe(true);
  });

  test('a file or a relative path is refused as invalid_params', async () => {
    expect((await refusal(listDir({ path: join(root, 'README.md') }, access()))).code).toBe('invalid_params');
    expect((await refusal(listDir({ path: 'src' }, access()))).code).toBe('invalid_params');
    expect((await refusal(listDir({ path: root, depth: 9 }, access()))).code).toBe('invalid_params');
  });
});

describe('globMatcher', () => {
  test.each([
    ['*.ts', 'src/a.ts', 'a.ts', true],
    ['*.ts', 'src/a.tsx', 'a.tsx', false],
    ['**/*.ts', 'a.ts', 'a.ts', true],
    ['**/*.ts', 'src/deep/c.ts', 'c.ts', true],
    ['src/*.ts', 'src/deep/c.ts', 'c.ts', false],
    ['src/**', 'src/deep/c.ts', 'c.ts', true],
    ['?.md', 'a.md', 'a.md', true],
    ['?.md', 'ab.md', 'ab.md', false],
    ['[ab].js', 'b.js', 'b.js', true],
    ['[!ab].js', 'b.js', 'b.js', false],
    ['*.{ts,js}', 'b.js', 'b.js', true],
    ['*.{ts,js}', 'b.md', 'b.md', false],
    ['a+b(c).txt', 'a+b(c).txt', 'a+b(c).txt', true],
  ])('%s against %s → %s', (glob, relative, name, expected) => {
    expect(globMatcher(glob)(relative, name)).toBe(expected);
  });

  test('an unusable glob is invalid_params', () => {
    expect(() => globMatcher('[z-a]')).toThrowError(expect.objectContaining({ code: 'invalid_params' }));
  });
});
