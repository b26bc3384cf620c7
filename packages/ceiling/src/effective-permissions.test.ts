import { FULL_POLICY, type Policy, READ_ONLY_POLICY, toolNames } from '@letkite/policy';
import { describe, expect, test } from 'vitest';
import type { Ceiling } from './ceiling-schema';
import { CLOSED_CEILING, DEFAULT_CEILING } from './defaults';
import { effectivePermissions, type ToolGrant } from './effective-permissions';
import { Random, randomCeiling, randomPolicy } from './random-inputs.testing';

const everything: ToolGrant = { tools: '*', machines: '*' };
const tools = (policy: Policy, ceiling: Ceiling, role = everything, connection = everything) =>
  effectivePermissions({ role, connection, machine: 'm1', policy, ceiling, home: '/home/kite' }).tools;

describe('effectivePermissions', () => {
  test('full policy under the default ceiling: commands, terminals and files, no screen, tunnels or wake', () => {
    // Every tool but the ones the default ceiling keeps off (gui, tunnels and wake), in the published order.
    const offByDefault = [
      'tunnel_open',
      'tunnel_close',
      'tunnels_list',
      'gui_observe',
      'gui_act',
      'wake_node',
      'wake_device',
    ];
    expect(tools(FULL_POLICY, DEFAULT_CEILING)).toEqual(toolNames.filter((t) => !offByDefault.includes(t)));
  });

  test('read-only policy: reading tools only', () => {
    expect(tools(READ_ONLY_POLICY, DEFAULT_CEILING)).toEqual([
      'machines_list',
      'read_file',
      'list_dir',
      'git_status',
      'git_diff',
      'copy_between_hosts',
      'transfer_start',
      'transfer_status',
      'approval_wait',
    ]);
  });

  test('a ceiling with shell off removes every command tool even under the full policy', () => {
    const result = tools(FULL_POLICY, { ...DEFAULT_CEILING, shell: 'off' });
    for (const tool of ['exec', 'exec_many', 'shell_run', 'job_start', 'terminal_open']) {
      expect(result).not.toContain(tool);
    }
  });

  test('allowlist mode keeps exec but has no shell_run and no terminals', () => {
    const result = tools(FULL_POLICY, { ...DEFAULT_CEILING, commands_mode: 'allowlist' });
    expect(result).toContain('exec');
    expect(result).not.toContain('shell_run');
    expect(result).not.toContain('terminal_open');
  });

  test('the closed ceiling leaves only the tools that touch no machine', () => {
    expect(tools(FULL_POLICY, CLOSED_CEILING)).toEqual(['machines_list', 'approval_wait']);
  });

  test('write tools need some path that is rw in both policy and ceiling', () => {
    const ceiling: Ceiling = { ...DEFAULT_CEILING, files: [{ path: '/srv', access: 'rw' }] };
    expect(tools({ ...FULL_POLICY, files: [{ path: '/opt', access: 'rw' }] }, ceiling)).not.toContain('read_file');
    expect(tools({ ...FULL_POLICY, files: [{ path: '/srv/app', access: 'rw' }] }, ceiling)).toContain('write_file');
    expect(tools({ ...FULL_POLICY, files: [{ path: '/srv/app', access: 'ro' }] }, ceiling)).not.toContain('write_file');
  });

  test('screen, tunnels and wake appear only when both sides turn them on', () => {
    const policy: Policy = { ...FULL_POLICY, gui: 'act', tunnel_targets: ['127.0.0.1:5432'] };
    expect(tools(policy, DEFAULT_CEILING)).not.toContain('gui_observe');
    const open: Ceiling = { ...DEFAULT_CEILING, gui: 'observe', tunnel_targets: ['127.0.0.0/8:*'], wake: true };
    const result = tools(policy, open);
    expect(result).toEqual(expect.arrayContaining(['gui_observe', 'tunnel_open', 'tunnels_list', 'wake_node']));
    expect(result).not.toContain('gui_act');
  });

  test('role and connection both have to grant a tool', () => {
    const role: ToolGrant = { tools: ['exec', 'read_file', 'machines_list'], machines: '*' };
    const connection: ToolGrant = { tools: ['read_file', 'write_file', 'machines_list'], machines: '*' };
    expect(tools(FULL_POLICY, DEFAULT_CEILING, role, connection)).toEqual(['machines_list', 'read_file']);
  });

  test('a machine outside the role or the connection gets no tools', () => {
    expect(tools(FULL_POLICY, DEFAULT_CEILING, { tools: '*', machines: ['m2'] })).toEqual([]);
    expect(tools(FULL_POLICY, DEFAULT_CEILING, everything, { tools: '*', machines: ['m2'] })).toEqual([]);
    expect(tools(FULL_POLICY, DEFAULT_CEILING, everything, { tools: '*', machines: ['m1'] })).not.toEqual([]);
  });

  test('without a home, `~` is the conventional home of run_as', () => {
    const ceiling: Ceiling = { ...DEFAULT_CEILING, files: [{ path: '~', access: 'rw' }], run_as: 'svc' };
    const policy: Policy = { ...FULL_POLICY, files: [{ path: '/home/svc/app', access: 'rw' }] };
    const result = effectivePermissions({ role: everything, connection: everything, machine: 'm1', policy, ceiling });
    expect(result.tools).toContain('write_file');
  });

  test('property: the tools are always within role ∩ connection and what the clamp leaves', () => {
    const r = new Random(99);
    for (let n = 0; n < 300; n++) {
      const policy = randomPolicy(r);
      const ceiling = randomCeiling(r);
      const role: ToolGrant = { tools: r.bool() ? '*' : r.some(toolNames, 12), machines: '*' };
      const connection: ToolGrant = { tools: r.bool() ? '*' : r.some(toolNames, 12), machines: '*' };
      const result = effectivePermissions({ role, connection, machine: 'm1', policy, ceiling, home: '/home/kite' });
      for (const tool of result.tools) {
        if (role.tools !== '*') expect(role.tools).toContain(tool);
        if (connection.tools !== '*') expect(connection.tools).toContain(tool);
      }
      if (ceiling.shell === 'off' || policy.shell === 'off') expect(result.tools).not.toContain('exec');
      if (!ceiling.terminals) expect(result.tools).not.toContain('terminal_open');
      if (!ceiling.wake) expect(result.tools).not.toContain('wake_node');
      if (ceiling.gui === 'off' || policy.gui === 'off') expect(result.tools).not.toContain('gui_observe');
      if (!ceiling.transfers) expect(result.tools).not.toContain('transfer_start');
    }
  });
});
