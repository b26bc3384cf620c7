import { toolNames } from '@letkite/policy';
import { expect, test } from 'vitest';
import { baseTools, groupOfTool, parseScope, toolGroups, toolsForScopeList, toolsOfGroups } from './scopes';

test('every tool of DESIGN §7 is a base tool or in exactly one group', () => {
  for (const tool of toolNames) {
    const groups = Object.entries(toolGroups).filter(([, tools]) => (tools as readonly string[]).includes(tool));
    expect(groups.length + ((baseTools as readonly string[]).includes(tool) ? 1 : 0), tool).toBe(1);
  }
});

test('a scope string keeps known groups in their order and drops the rest', () => {
  expect(parseScope('files offline_access commands openid')).toEqual(['commands', 'files']);
  expect(parseScope(undefined)).toEqual([]);
});

test('groups expand to their tools plus the base tools', () => {
  expect(toolsOfGroups(['files'])).toEqual([
    'machines_list',
    'approval_wait',
    'read_file',
    'list_dir',
    'write_file',
    'delete_path',
    'git_status',
    'git_diff',
  ]);
  expect(groupOfTool('exec')).toBe('commands');
  expect(groupOfTool('machines_list')).toBeNull();
});

test('a CLI scope list mixes groups and tool names; an unknown entry is invalid_params', () => {
  expect(toolsForScopeList(['read_file', 'jobs'])).toEqual([
    'machines_list',
    'job_start',
    'job_status',
    'job_output',
    'job_stop',
    'read_file',
    'approval_wait',
  ]);
  expect(() => toolsForScopeList(['sudo'])).toThrow(expect.objectContaining({ code: 'invalid_params' }));
});
