import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openStore } from '@letkite/gateway';
import { parsePolicy } from '@letkite/policy';
import { expect, test } from 'vitest';
import { UsageError } from '../io';
import { runCaptured, tempDirEachTest } from '../testing';
import { admin } from './admin';

const tmp = tempDirEachTest('letkite-admin-');

async function createToken(extra: string[]) {
  const { code, stdout } = await runCaptured((io) =>
    admin(['token', 'create', '--name', 'ci', '--data', tmp.path, ...extra], io),
  );
  const store = await openStore(join(tmp.path, 'letkite.db'));
  try {
    const token = await store.findApiTokenByHash(createHash('sha256').update(stdout.trim()).digest('hex'));
    return { code, grant: token?.grant };
  } finally {
    await store.close();
  }
}

test('without grant flags the token gets the full policy on every machine and tool', async () => {
  const { code, grant } = await createToken([]);
  expect(code).toBe(0);
  expect(grant).toEqual({ policy: 'full', machines: '*', scopes: '*' });
});

test('a built-in policy name and scopes given as groups and tools are stored in the grant', async () => {
  const { grant } = await createToken(['--policy', 'read-only', '--scopes', 'files,exec']);
  expect(grant?.policy).toBe('read-only');
  expect(grant?.scopes).toEqual([
    'machines_list',
    'exec',
    'read_file',
    'list_dir',
    'write_file',
    'delete_path',
    'git_status',
    'git_diff',
    'approval_wait',
  ]);
});

test('a policy file is parsed and stored inline, and reads back as a valid policy', async () => {
  const file = join(tmp.path, 'ops.toml');
  await writeFile(file, 'name = "ops"\nshell = "off"\nfiles = [{ path = "/srv", access = "ro" }]\n');
  const { grant } = await createToken(['--policy', file]);
  expect(grant?.policy).toMatchObject({ name: 'ops', shell: 'off' });
  expect(parsePolicy(grant?.policy).name).toBe('ops');
});

test.each([
  ['a policy that is neither built in nor a file', ['--policy', join('/nonexistent', 'p.toml')], UsageError],
  ['an unknown machine', ['--machines', 'nowhere'], UsageError],
])('%s is a usage error', async (_what, extra, type) => {
  await expect(createToken(extra)).rejects.toBeInstanceOf(type);
});

test('an unknown scope is invalid_params', async () => {
  await expect(createToken(['--scopes', 'root'])).rejects.toMatchObject({ code: 'invalid_params' });
});
