import { access as exists, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { deletePath } from './delete-path';
import { type Area, accessFor, makeArea, refusal } from './test-fixture';

let area: Area;
let root: string;
beforeEach(async () => {
  area = await makeArea();
  root = join(area.dir, 'root');
  await mkdir(join(root, 'build', 'cache'), { recursive: true });
  await mkdir(join(root, 'docs'));
  await mkdir(join(root, 'secret'));
  await writeFile(join(root, 'file.txt'), 'x');
  await writeFile(join(root, 'build', 'out.js'), 'x');
  await writeFile(join(root, 'build', 'cache', 'blob'), 'x');
  await writeFile(join(root, 'docs', 'manual.txt'), 'x');
  await writeFile(join(root, 'secret', 'token'), 'hunter2');
  await writeFile(join(area.dir, 'outside.txt'), 'keep me');
});
afterEach(() => area.cleanup());

const access = () => accessFor({ roots: { [root]: 'rw', [join(root, 'docs')]: 'ro' }, deny: [join(root, 'secret')] });
const present = (path: string) =>
  exists(path).then(
    () => true,
    () => false,
  );

describe('delete_path', () => {
  test('deletes a file', async () => {
    expect(await deletePath({ path: join(root, 'file.txt') }, access())).toEqual({ deleted: true, type: 'file' });
    expect(await present(join(root, 'file.txt'))).toBe(false);
  });

  test('a directory needs recursive: true, and then goes with everything in it', async () => {
    const refused = await refusal(deletePath({ path: join(root, 'build') }, access()));
    expect(refused.code).toBe('invalid_params');
    expect(refused.message).toContain('recursive: true');
    expect(await present(join(root, 'build', 'cache', 'blob'))).toBe(true);
    expect(await deletePath({ path: join(root, 'build'), recursive: true }, access())).toEqual({
      deleted: true,
      type: 'dir',
    });
    expect(await present(join(root, 'build'))).toBe(false);
  });

  test('a symlink is removed, never its target, and a tree is not followed through one', async () => {
    await symlink(join(area.dir, 'outside.txt'), join(root, 'link'));
    await mkdir(join(root, 'tree'));
    await symlink(area.dir, join(root, 'tree', 'up'));
    expect(await deletePath({ path: join(root, 'link') }, access())).toEqual({ deleted: true, type: 'symlink' });
    await deletePath({ path: join(root, 'tree'), recursive: true }, access());
    expect(await readFile(join(area.dir, 'outside.txt'), 'utf8')).toBe('keep me');
    expect(await present(join(root, 'tree'))).toBe(false);
  });

  test('the top of the allowed area cannot be deleted, nor /', async () => {
    const top = await refusal(deletePath({ path: root, recursive: true }, access()));
    expect(top.code).toBe('blocked_by_policy');
    expect(await present(join(root, 'file.txt'))).toBe(true);
    // No `recursive`: if the guard ever broke, this would still only be refused as a directory.
    const everything = accessFor({ roots: { '/': 'rw' } });
    expect((await refusal(deletePath({ path: '/' }, everything))).code).toBe('blocked_by_policy');
    expect((await refusal(deletePath({ path: `${root}/../../../../../../..` }, everything))).code).toBe(
      'blocked_by_policy',
    );
  });

  test('a read-only path is refused with blocked_by_policy and stays', async () => {
    const refused = await refusal(deletePath({ path: join(root, 'docs', 'manual.txt') }, access()));
    expect(refused.code).toBe('blocked_by_policy');
    expect(await present(join(root, 'docs', 'manual.txt'))).toBe(true);
  });

  test('a denied path answers exactly like a missing one', async () => {
    for (const path of [join(root, 'secret', 'token'), join(root, 'secret'), join(root, 'no-such-file')]) {
      expect(await refusal(deletePath({ path, recursive: true }, access()))).toEqual({
        code: 'not_found',
        message: `no such file: "${path}"`,
        details: undefined,
      });
    }
    expect(await readFile(join(root, 'secret', 'token'), 'utf8')).toBe('hunter2');
  });

  test('a tree holding a hidden or read-only entry is refused whole, naming none, and nothing is removed', async () => {
    await mkdir(join(root, 'mixed', 'docs'), { recursive: true });
    await writeFile(join(root, 'mixed', 'a.txt'), 'x');
    await writeFile(join(root, 'mixed', 'server.pem'), 'key');
    const refused = await refusal(deletePath({ path: join(root, 'mixed'), recursive: true }, access()));
    expect(refused.code).toBe('blocked_by_policy');
    expect(refused.message).not.toContain('server.pem');
    expect((await readdir(join(root, 'mixed'))).sort()).toEqual(['a.txt', 'docs', 'server.pem']);

    const withReadOnly = accessFor({ roots: { [root]: 'rw', [join(root, 'mixed', 'docs')]: 'ro' } });
    await writeFile(join(root, 'mixed', 'docs', 'keep.txt'), 'x');
    await rm(join(root, 'mixed', 'server.pem'));
    expect((await refusal(deletePath({ path: join(root, 'mixed'), recursive: true }, withReadOnly))).code).toBe(
      'blocked_by_policy',
    );
    expect(await present(join(root, 'mixed', 'a.txt'))).toBe(true);
  });
});
