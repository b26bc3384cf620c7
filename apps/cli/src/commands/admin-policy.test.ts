import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runCli } from '../main';
import { runCaptured, tempDirEachTest } from '../testing';

const tmp = tempDirEachTest('letkite-admin-policy-');

async function cli(...args: string[]) {
  return runCaptured((io) => runCli(['admin', ...args, '--data', tmp.path], io));
}

const OPS = 'name = "ops"\nshell = "full"\n\n[commands]\ndefault = "allow"\n';

test('policy create, show, update and list act on the account policies with every version', async () => {
  const file = join(tmp.path, 'ops.toml');
  await writeFile(file, OPS);
  expect((await cli('policy', 'create', '--file', file)).code).toBe(0);
  await writeFile(file, OPS.replace('"allow"', '"approve"'));
  const updated = await cli('policy', 'update', 'ops', '--file', file);
  expect(updated.stderr).toContain('version 2');
  const shown = await cli('policy', 'show', 'ops');
  expect(shown.stdout).toBe(OPS.replace('"allow"', '"approve"'));
  expect(shown.stderr).toContain('# v1 cli:admin');
  const list = await cli('policy', 'list');
  expect(list.stdout.split('\n').map((l) => l.split('\t')[0])).toEqual(['full', 'read-only', 'ops', '']);
});

test('bad TOML exits 2 naming the line; a built-in cannot be changed', async () => {
  const file = join(tmp.path, 'bad.toml');
  await writeFile(file, 'name = "bad"\nshell = "sometimes"\n');
  const bad = await cli('policy', 'create', '--file', file);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('line 2: shell');
  await writeFile(file, 'name = "full"\n');
  const builtin = await cli('policy', 'update', 'full', '--file', file);
  expect(builtin.code).toBe(1);
  expect(builtin.stderr).toContain('built-in');
});

test('a token made with --policy NAME stores the name, and the policy then cannot be deleted', async () => {
  const file = join(tmp.path, 'ops.toml');
  await writeFile(file, OPS);
  await cli('policy', 'create', '--file', file);
  expect((await cli('token', 'create', '--name', 'ci', '--policy', 'ops')).code).toBe(0);
  const refused = await cli('policy', 'delete', 'ops');
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('conflict');
  expect(refused.stderr).toContain('token "ci" of owner');
  expect((await cli('token', 'create', '--name', 'x', '--policy', 'nope')).code).toBe(2);
});

test('account set changes the switches and show prints them', async () => {
  const set = await cli('account', 'set', '--mcp-http', 'off', '--disable-tools', 'screen,power');
  expect(set.code).toBe(0);
  expect(set.stdout).toContain('mcp_http\toff');
  const shown = await cli('account', 'show');
  expect(shown.stdout).toContain('stdio_bridge\ton');
  expect(shown.stdout).toContain('disabled_tool_groups\tpower,screen');
  expect((await cli('account', 'set', '--mcp-http', 'maybe')).code).toBe(2);
  expect((await cli('account', 'set', '--disable-tools', 'lasers')).code).toBe(2);
});
