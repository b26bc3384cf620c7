import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CwdPolicy, checkCwd } from './check-cwd';

let root: string;
let rp: CwdPolicy;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'letkite-cwd-')));
  mkdirSync(join(root, 'work', 'sub'), { recursive: true });
  mkdirSync(join(root, 'work', 'secret', 'inner'), { recursive: true });
  mkdirSync(join(root, 'ceiling-hidden'));
  mkdirSync(join(root, 'outside'));
  writeFileSync(join(root, 'work', 'file.txt'), 'x');
  symlinkSync(join(root, 'work', 'secret'), join(root, 'work', 'to-secret'));
  symlinkSync(join(root, 'outside'), join(root, 'work', 'to-outside'));
  symlinkSync(join(root, 'work', 'sub'), join(root, 'work', 'to-sub'));
  const files = [{ path: join(root, 'work'), access: 'rw' as const }];
  rp = {
    policy: {
      files: [...files, { path: join(root, 'ceiling-hidden'), access: 'ro' }],
      deny: [join(root, 'work', 'secret')],
    },
    clamped: { file_layers: [files, files], deny: [join(root, 'work', 'secret'), join(root, 'ceiling-hidden')] },
  };
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('checkCwd', () => {
  test('a reachable directory is returned as its real path', async () => {
    expect(await checkCwd(rp, join(root, 'work', 'sub'), root)).toBe(join(root, 'work', 'sub'));
    expect(await checkCwd(rp, join(root, 'work', 'to-sub'), root)).toBe(join(root, 'work', 'sub'));
    expect(await checkCwd(rp, 'work/sub', root)).toBe(join(root, 'work', 'sub'));
  });

  test.each([
    ['a denied directory', 'work/secret', 'blocked_by_policy'],
    ['a missing directory below a denied one', 'work/secret/nope', 'blocked_by_policy'],
    ['.. back into a denied one', 'work/sub/../secret', 'blocked_by_policy'],
    ['a directory outside every rule', 'outside', 'blocked_by_policy'],
    ['a directory only the ceiling hides', 'ceiling-hidden', 'blocked_by_ceiling'],
    ['a visible symlink into a denied directory', 'work/to-secret', 'not_found'],
    ['a visible symlink out of the rules', 'work/to-outside', 'not_found'],
    ['a directory below a visible symlink into a denied one', 'work/to-secret/inner', 'not_found'],
    ['a missing directory', 'work/nope', 'not_found'],
    ['a file', 'work/file.txt', 'invalid_params'],
  ])('%s is refused (%s → %s)', async (_what, relative, code) => {
    await expect(checkCwd(rp, join(root, relative), root)).rejects.toMatchObject({ code });
  });

  test('the refusal of a denied directory does not depend on whether it exists', async () => {
    const there = join(root, 'work', 'secret');
    const missing = join(there, 'nope');
    const a = await checkCwd(rp, there, root).catch((e: { code: string; message: string }) => e);
    const b = await checkCwd(rp, missing, root).catch((e: { code: string; message: string }) => e);
    expect(typeof a === 'object' && typeof b === 'object').toBe(true);
    if (typeof a !== 'object' || typeof b !== 'object') return;
    expect(b.code).toBe(a.code);
    expect(b.message.replace(missing, there)).toBe(a.message);
  });

  test('without a cwd: the home when reachable, else /', async () => {
    expect(await checkCwd(rp, undefined, join(root, 'work'))).toBe(join(root, 'work'));
    expect(await checkCwd(rp, undefined, join(root, 'work', 'secret'))).toBe('/');
    expect(await checkCwd(rp, undefined, join(root, 'missing-home'))).toBe('/');
  });

  // The fast path (one realpath when no symlink is on the way) must not remember anything between calls.
  test('a directory swapped for a symlink into a denied one is refused on the next call', async () => {
    const swap = join(root, 'work', 'swap');
    mkdirSync(swap);
    expect(await checkCwd(rp, swap, root)).toBe(swap);
    renameSync(swap, join(root, 'work', 'swapped-away'));
    symlinkSync(join(root, 'work', 'secret'), swap);
    await expect(checkCwd(rp, swap, root)).rejects.toMatchObject({ code: 'not_found' });
    await expect(checkCwd(rp, undefined, swap)).resolves.toBe('/');
  });

  test('a home reached through a symlink resolves like any other directory', async () => {
    expect(await checkCwd(rp, undefined, join(root, 'work', 'to-sub'))).toBe(join(root, 'work', 'sub'));
    expect(await checkCwd(rp, undefined, join(root, 'work', 'to-secret'))).toBe('/');
  });
});
