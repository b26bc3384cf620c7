import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, writeFile as put, readdir, readFile, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { type Area, accessFor, makeArea, refusal } from './test-fixture';
import { writeFile } from './write-file';

let area: Area;
let root: string;
beforeEach(async () => {
  area = await makeArea();
  root = join(area.dir, 'root');
  await mkdir(join(root, 'secret'), { recursive: true });
  await mkdir(join(root, 'docs'));
  await put(join(root, 'notes.txt'), 'v1');
  await put(join(root, 'docs', 'manual.txt'), 'read me');
  await put(join(area.dir, 'outside.txt'), 'untouched');
});
afterEach(() => area.cleanup());

const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const access = (extra: Partial<Parameters<typeof accessFor>[0]> = {}) =>
  accessFor({ roots: { [root]: 'rw', [join(root, 'docs')]: 'ro' }, deny: [join(root, 'secret')], ...extra });
const isRoot = process.getuid?.() === 0;

describe('write_file', () => {
  test('creates a file and answers its size and sha256', async () => {
    const result = await writeFile({ path: join(root, 'new.txt'), content: 'héllo' }, access());
    expect(result).toEqual({ bytes: 6, sha256: sha('héllo') });
    expect(await readFile(join(root, 'new.txt'), 'utf8')).toBe('héllo');
  });

  test('base64 content is written as bytes; content that is not base64 is invalid_params', async () => {
    const bytes = Buffer.from([0, 1, 2, 255]);
    await writeFile({ path: join(root, 'blob'), content: bytes.toString('base64'), encoding: 'base64' }, access());
    expect(await readFile(join(root, 'blob'))).toEqual(bytes);
    const refused = await refusal(writeFile({ path: join(root, 'x'), content: 'no!', encoding: 'base64' }, access()));
    expect(refused.code).toBe('invalid_params');
  });

  test('if_sha256 that matches replaces the file', async () => {
    const result = await writeFile({ path: join(root, 'notes.txt'), content: 'v2', if_sha256: sha('v1') }, access());
    expect(result.sha256).toBe(sha('v2'));
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).toBe('v2');
  });

  test('if_sha256 that does not match is a conflict with the current sha256, and leaves no temporary file', async () => {
    const refused = await refusal(
      writeFile({ path: join(root, 'notes.txt'), content: 'v2', if_sha256: sha('v0') }, access()),
    );
    expect(refused.code).toBe('conflict');
    expect(refused.details).toEqual({ current_sha256: sha('v1') });
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).toBe('v1');
    expect((await readdir(root)).sort()).toEqual(['docs', 'notes.txt', 'secret']);
  });

  test('if_sha256 on a missing file is a conflict with current_sha256 null, and creates nothing', async () => {
    const refused = await refusal(
      writeFile({ path: join(root, 'gone.txt'), content: 'x', if_sha256: sha('x') }, access()),
    );
    expect(refused).toMatchObject({ code: 'conflict', details: { current_sha256: null } });
    expect((await readdir(root)).sort()).toEqual(['docs', 'notes.txt', 'secret']);
  });

  test('content over the write limit is too_large and nothing is written', async () => {
    const refused = await refusal(
      writeFile({ path: join(root, 'notes.txt'), content: 'x'.repeat(11) }, access({ maxWriteBytes: 10 })),
    );
    expect(refused).toMatchObject({ code: 'too_large', details: { max_bytes: 10 } });
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).toBe('v1');
  });

  test('missing parent directories are not_found unless create_dirs is set', async () => {
    const path = join(root, 'a', 'b', 'c.txt');
    expect((await refusal(writeFile({ path, content: 'x' }, access()))).code).toBe('not_found');
    await writeFile({ path, content: 'x', create_dirs: true }, access());
    expect(await readFile(path, 'utf8')).toBe('x');
  });

  test('mode sets the permission bits; an overwrite without mode keeps the old ones', async () => {
    await writeFile({ path: join(root, 'private'), content: 's', mode: '0600' }, access());
    expect((await stat(join(root, 'private'))).mode & 0o7777).toBe(0o600);
    await writeFile({ path: join(root, 'shared'), content: 's', mode: 0o640 }, access());
    expect((await stat(join(root, 'shared'))).mode & 0o7777).toBe(0o640);
    await chmod(join(root, 'notes.txt'), 0o604);
    await writeFile({ path: join(root, 'notes.txt'), content: 'v2' }, access());
    expect((await stat(join(root, 'notes.txt'))).mode & 0o7777).toBe(0o604);
    const setuid = await refusal(writeFile({ path: join(root, 'x'), content: '', mode: '4755' }, access()));
    expect(setuid.code).toBe('invalid_params');
  });

  test('a read-only path refuses with blocked_by_policy and stays as it was', async () => {
    const refused = await refusal(writeFile({ path: join(root, 'docs', 'manual.txt'), content: 'x' }, access()));
    expect(refused.code).toBe('blocked_by_policy');
    expect(await readFile(join(root, 'docs', 'manual.txt'), 'utf8')).toBe('read me');
    expect((await refusal(writeFile({ path: join(root, 'docs', 'new'), content: 'x' }, access()))).code).toBe(
      'blocked_by_policy',
    );
  });

  test('a denied path answers exactly like a missing one, existing or not, and nothing is created', async () => {
    await put(join(root, 'secret', 'token'), 'hunter2');
    for (const path of [join(root, 'secret', 'token'), join(root, 'secret', 'new'), join(root, 'key.pem')]) {
      expect(await refusal(writeFile({ path, content: 'x', create_dirs: true }, access()))).toEqual({
        code: 'not_found',
        message: `no such file: "${path}"`,
        details: undefined,
      });
    }
    expect(await readFile(join(root, 'secret', 'token'), 'utf8')).toBe('hunter2');
    expect(await readdir(join(root, 'secret'))).toEqual(['token']);
  });

  test('symlinks cannot carry a write outside the root, not even a dangling one', async () => {
    await symlink(join(area.dir, 'outside.txt'), join(root, 'to-outside'));
    await symlink(area.dir, join(root, 'dir-outside'));
    await symlink(join(area.dir, 'created-by-link'), join(root, 'dangling'));
    for (const path of [join(root, 'to-outside'), join(root, 'dir-outside', 'new.txt'), join(root, 'dangling')]) {
      expect((await refusal(writeFile({ path, content: 'pwned' }, access()))).code).toBe('not_found');
    }
    expect(await readFile(join(area.dir, 'outside.txt'), 'utf8')).toBe('untouched');
    expect((await readdir(area.dir)).sort()).toEqual(['outside.txt', 'root']);
  });

  test('a symlink within the root is followed: its target is written and the link stays', async () => {
    await symlink('notes.txt', join(root, 'link'));
    await writeFile({ path: join(root, 'link'), content: 'via link' }, access());
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).toBe('via link');
    expect(await readdir(root)).toContain('link');
  });

  test('a directory cannot be written over', async () => {
    expect((await refusal(writeFile({ path: join(root, 'secret', '..'), content: 'x' }, access()))).code).toBe(
      'invalid_params',
    );
  });

  test.skipIf(!isRoot)('a new file goes to the run-as account; an existing file keeps its owner', async () => {
    const runAs = { uid: 4242, gid: 4343 };
    await writeFile({ path: join(root, 'fresh', 'mine.txt'), content: 'x', create_dirs: true }, access({ runAs }));
    const fresh = await stat(join(root, 'fresh', 'mine.txt'));
    expect({ uid: fresh.uid, gid: fresh.gid }).toEqual(runAs);
    const dir = await stat(join(root, 'fresh'));
    expect({ uid: dir.uid, gid: dir.gid }).toEqual(runAs);
    await chown(join(root, 'notes.txt'), 1111, 2222);
    await writeFile({ path: join(root, 'notes.txt'), content: 'v2' }, access({ runAs }));
    const kept = await stat(join(root, 'notes.txt'));
    expect({ uid: kept.uid, gid: kept.gid }).toEqual({ uid: 1111, gid: 2222 });
  });
});
