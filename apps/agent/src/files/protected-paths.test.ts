import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { deletePath } from './delete-path';
import { listDir } from './list-dir';
import { readFile } from './read-file';
import type { FileAccess } from './resolve-path';
import { type Area, accessFor, makeArea, refusal } from './test-fixture';
import { writeFile as writeFileOp } from './write-file';

// The file tools refuse LetKite's own files by name (blocked_by_ceiling), however they are spelled, even where
// the rules would give read-write: the agent's protected paths are not the ceiling's to forget.
let area: Area;
let access: FileAccess;
let data: string;

beforeEach(async () => {
  area = await makeArea();
  data = join(area.dir, 'data');
  await mkdir(join(data, 'agent'), { recursive: true });
  await writeFile(join(data, 'owner-token'), 'lk_secret');
  await writeFile(join(data, 'agent', 'ceiling.toml'), 'version = 1\n');
  // The agent adds the protected paths to the deny list too; the fixture does the same.
  access = { ...accessFor({ roots: { '/': 'ro', [area.dir]: 'rw' }, deny: [data] }), protectedPaths: [data] };
});
afterEach(() => area.cleanup());

describe('protected paths in the file tools', () => {
  test.each([
    ['by name', () => join(data, 'owner-token')],
    ['with ..', () => join(area.dir, 'x', '..', 'data', 'owner-token')],
    ['through /proc/self/root', () => `/proc/self/root${join(data, 'owner-token')}`],
  ])('read_file %s is blocked_by_ceiling, without the content', async (_how, path) => {
    const r = await refusal(readFile({ path: path() }, access));
    expect(r.code).toBe('blocked_by_ceiling');
    expect(JSON.stringify(r)).not.toContain('lk_secret');
  });

  test('a symlink into the protected tree, and a hard link to a protected file, are refused', async () => {
    await symlink(join(data, 'owner-token'), join(area.dir, 'soft'));
    await link(join(data, 'owner-token'), join(area.dir, 'hard'));
    for (const name of ['soft', 'hard']) {
      const r = await refusal(readFile({ path: join(area.dir, name) }, access));
      expect([name, r.code]).toEqual([name, 'blocked_by_ceiling']);
    }
  });

  test('writing the ceiling, or a new file beside it, is refused', async () => {
    for (const path of [join(data, 'agent', 'ceiling.toml'), join(data, 'agent', 'new.toml')]) {
      const r = await refusal(writeFileOp({ path, content: 'shell = "full"' }, access));
      expect(r.code).toBe('blocked_by_ceiling');
    }
  });

  test('a listing leaves the protected tree out, and deleting its parent is refused', async () => {
    const listed = await listDir({ path: area.dir, include_hidden: true, depth: 5 }, access);
    expect(JSON.stringify(listed)).not.toContain('owner-token');
    expect(JSON.stringify(listed)).not.toContain('"data"');
    const r = await refusal(deletePath({ path: area.dir, recursive: true }, access));
    expect(r.code).not.toBe(undefined);
  });
});
