import { userInfo } from 'node:os';
import { parseCeilingToml } from '@letkite/ceiling';
import { loadCommandRules } from '@letkite/command-rules';
import { isLetKiteError } from '@letkite/protocol';
import { beforeAll, describe, expect, test } from 'vitest';
import { authorizeCommand, authorizeGatedTool } from './authorize-command';
import { requestPolicy } from './request-policy';

const ceiling = {
  source: 'file' as const,
  path: '/etc/letkite/ceiling.toml',
  ceiling: parseCeilingToml(
    `version = 1\nshell = "full"\nterminals = true\nrun_as = "${userInfo().username}"\nfiles = [{ path = "*", access = "rw" }]\n`,
  ),
};

const policy = {
  name: 'gated',
  shell: 'full',
  commands: { mode: 'shell', default: 'allow', rules: [{ match: 'touch *', verdict: 'approve' }] },
  approval: { tools: ['shell_run', 'job_start', 'terminal_open'] },
};

const rp = requestPolicy(policy, ceiling);

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    return isLetKiteError(err) ? err.code : String(err);
  }
}

describe('authorizeGatedTool: the agent re-checks approval.tools', () => {
  test.each(['shell_run', 'job_start', 'terminal_open'] as const)('%s runs only with a vouched approval', (tool) => {
    expect(codeOf(() => authorizeGatedTool(rp, tool, { policy }))).toBe('blocked_by_policy');
    expect(codeOf(() => authorizeGatedTool(rp, tool, { policy, confirm: true }))).toBe('blocked_by_policy');
    expect(codeOf(() => authorizeGatedTool(rp, tool, { policy, approved: false }))).toBe('blocked_by_policy');
    expect(codeOf(() => authorizeGatedTool(rp, tool, { policy, approved: true }))).toBeNull();
  });

  test('a tool the policy does not list needs nothing', () => {
    expect(codeOf(() => authorizeGatedTool(rp, 'exec', { policy }))).toBeNull();
    expect(codeOf(() => authorizeGatedTool(rp, 'write_file', { policy }))).toBeNull();
  });
});

describe('authorizeCommand: an approve verdict runs only with a vouched approval', () => {
  beforeAll(async () => {
    await loadCommandRules();
  });

  test('approve', () => {
    expect(codeOf(() => authorizeCommand(rp, 'touch /tmp/x', { policy }))).toBe('blocked_by_policy');
    expect(codeOf(() => authorizeCommand(rp, 'touch /tmp/x', { policy, confirm: true }))).toBe('blocked_by_policy');
    expect(codeOf(() => authorizeCommand(rp, 'touch /tmp/x', { policy, approved: true }))).toBeNull();
    expect(codeOf(() => authorizeCommand(rp, 'ls /tmp', { policy }))).toBeNull();
  });
});
