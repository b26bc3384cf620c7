import { userInfo } from 'node:os';
import { parseCeilingToml } from '@letkite/ceiling';
import { loadCommandRules } from '@letkite/command-rules';
import { isLetKiteError } from '@letkite/protocol';
import { beforeAll, describe, expect, test } from 'vitest';
import { authorizeCommand, authorizeGatedTool } from './authorize-command';
import { requestPolicy } from './request-policy';
import { withVerifiedApproval } from './verify-approval';

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

describe('approvals the machine verifies itself', () => {
  beforeAll(async () => {
    await loadCommandRules();
  });

  const base = `version = 1\nshell = "full"\nrun_as = "${userInfo().username}"\nfiles = [{ path = "*", access = "rw" }]\n`;
  const state = (toml: string) => ({
    source: 'file' as const,
    path: '/etc/letkite/ceiling.toml',
    ceiling: parseCeilingToml(toml),
  });
  const reasonOf = (fn: () => unknown): string => {
    try {
      fn();
      return 'ok';
    } catch (err) {
      return isLetKiteError(err) ? `${err.code}:${String(err.details?.reason ?? '')}` : String(err);
    }
  };
  const verified = (ctx: object) =>
    withVerifiedApproval({ policy, ...ctx }, { approvalId: 'apr_1', approver: 'Petra' });
  const key = 'pQECAyYgASFYIMnaKxRDYfnDwbuRtqW5U44ZxBYKAxaoowK8pwJpqzsmIlggdTzJjL0NMskwmDxzF9aylP3qawQeF4QAL95RlTQoi7Y';
  const pinned = `approvers = [ { name = "Petra", credential_id = "cGV0cmE", public_key = "${key}", rp_id = "localhost" } ]\n`;

  test('a ceiling approve rule is never satisfied by the gateway saying approved', () => {
    const rules = 'rules = [ { match = "rm *", verdict = "approve" } ]\n';
    const unpinned = requestPolicy(policy, state(base + rules));
    expect(reasonOf(() => authorizeCommand(unpinned, 'rm /tmp/x', { policy, approved: true }))).toBe(
      'blocked_by_ceiling:no_pinned_approvers',
    );
    const withKeys = requestPolicy(policy, state(base + rules + pinned));
    expect(reasonOf(() => authorizeCommand(withKeys, 'rm /tmp/x', { policy, approved: true }))).toBe(
      'blocked_by_ceiling:approval_not_verified',
    );
    expect(reasonOf(() => authorizeCommand(withKeys, 'rm /tmp/x', verified({})))).toBe('ok');
  });

  test('with approvers pinned, every approval the agent requires must be verified', () => {
    const rp2 = requestPolicy(policy, state(base + pinned));
    expect(reasonOf(() => authorizeCommand(rp2, 'touch /tmp/x', { policy, approved: true }))).toBe(
      'blocked_by_ceiling:approval_not_verified',
    );
    expect(reasonOf(() => authorizeCommand(rp2, 'touch /tmp/x', verified({})))).toBe('ok');
    expect(reasonOf(() => authorizeGatedTool(rp2, 'shell_run', { policy, approved: true }))).toBe(
      'blocked_by_ceiling:approval_not_verified',
    );
    expect(reasonOf(() => authorizeGatedTool(rp2, 'shell_run', verified({})))).toBe('ok');
    // What needs no approval still runs without one.
    expect(reasonOf(() => authorizeCommand(rp2, 'ls /tmp', { policy }))).toBe('ok');
  });

  test('a verified approval does not lift a deny', () => {
    const rp2 = requestPolicy(policy, state(`${base}rules = [ { match = "rm *", verdict = "deny" } ]\n${pinned}`));
    expect(reasonOf(() => authorizeCommand(rp2, 'rm /tmp/x', verified({})))).toBe('blocked_by_ceiling:');
  });
});
