import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePolicyToml } from '@letkite/policy';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SqlitePolicyStore } from '../store/sqlite/sqlite-policy-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import type { AuditEventInput } from '../store/types';
import { callableTools } from './account-switches';

const AT = '2026-12-01T10:00:00.000Z';
const opsSource = (shell: 'full' | 'off') =>
  `name = "ops"\nshell = "${shell}"\nfiles = [ { path = "*", access = "rw" } ]\n`;
const revision = (shell: 'full' | 'off') => {
  const source = opsSource(shell);
  return {
    name: 'ops',
    source,
    parsed: JSON.parse(JSON.stringify(parsePolicyToml(source))),
    author: 'user:u1',
    at: AT,
  };
};

// The tool sets are kept between calls: every change they are made from must show at the next call.
describe('callableTools', () => {
  let dir: string;
  let core: SqliteStore;
  let policies: SqlitePolicyStore;
  const accountId = 'acc_callable';
  const audit = (action: string): AuditEventInput => ({ accountId, at: AT, actor: 'user:u1', action, target: 'ops' });
  const principal = (scopes: '*' | string[] = '*') => ({
    accountId,
    grant: { policy: 'ops', machines: '*' as const, scopes },
  });
  const tools = async (scopes?: '*' | string[]) => (await callableTools(policies, principal(scopes))).tools;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'letkite-callable-'));
    core = new SqliteStore(join(dir, 'letkite.db'));
    policies = new SqlitePolicyStore(core);
    core.sqlite.prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)').run(accountId, 'acme', AT);
  });
  afterAll(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('an edit, a policy made again under the same name and version, a switch and the scopes apply at once', async () => {
    expect(await policies.create(accountId, revision('full'), audit('policy.create'))).toBe(true);
    expect((await tools()).has('exec')).toBe(true);
    expect((await tools()).has('exec')).toBe(true);

    expect(await policies.update(accountId, revision('off'), 1, audit('policy.update'))).toBe(2);
    expect((await tools()).has('exec')).toBe(false);

    // Deleted and created again: version 1 and the same creation time as the first, but other content.
    expect(await policies.delete(accountId, 'ops', audit('policy.delete'))).toEqual([]);
    expect(await policies.create(accountId, revision('off'), audit('policy.create'))).toBe(true);
    expect((await tools()).has('exec')).toBe(false);
    expect(await policies.update(accountId, revision('full'), 1, audit('policy.update'))).toBe(2);
    expect((await tools()).has('exec')).toBe(true);

    await policies.saveSettings(
      accountId,
      { mcpHttp: true, stdioBridge: true, legacySse: false, disabledToolGroups: ['commands'] },
      audit('settings.update'),
    );
    expect((await tools()).has('exec')).toBe(false);
    await policies.saveSettings(
      accountId,
      { mcpHttp: true, stdioBridge: true, legacySse: false, disabledToolGroups: [] },
      audit('settings.update'),
    );
    expect((await tools()).has('exec')).toBe(true);
    expect((await tools(['files'])).has('exec')).toBe(false);

    expect(await policies.delete(accountId, 'ops', audit('policy.delete'))).toEqual([]);
    const gone = await callableTools(policies, principal());
    expect(gone.tools.size).toBe(0);
    expect((gone.policyError as { code?: string }).code).toBe('blocked_by_policy');
  });
});
