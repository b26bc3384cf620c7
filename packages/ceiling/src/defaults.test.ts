import { DEFAULT_SECRET_PATHS } from '@letkite/policy';
import { expect, test } from 'vitest';
import { CLOSED_CEILING, DEFAULT_CEILING } from './defaults';

test('the documented defaults', () => {
  expect(DEFAULT_CEILING).toEqual({
    version: 1,
    shell: 'sandboxed',
    commands_mode: 'any',
    files: [
      { path: '~', access: 'rw' },
      { path: '/tmp', access: 'rw' },
      { path: '*', access: 'ro' },
    ],
    deny: [...DEFAULT_SECRET_PATHS],
    gui: 'off',
    gui_apps: [],
    tunnel_targets: [],
    terminals: true,
    transfers: true,
    wake: false,
    run_as: 'letkite',
    rules: [],
    allow: [],
    approvers: [],
  });
});

test('the closed ceiling turns everything off', () => {
  expect(CLOSED_CEILING).toMatchObject({
    shell: 'off',
    commands_mode: 'allowlist',
    files: [],
    deny: ['*'],
    gui: 'off',
    tunnel_targets: [],
    terminals: false,
    transfers: false,
    wake: false,
  });
});

test('the shared ceilings cannot be changed by a careless caller', () => {
  expect(() => {
    (DEFAULT_CEILING.files as { path: string; access: string }[]).push({ path: '/', access: 'rw' });
  }).toThrow(TypeError);
  expect(() => {
    (CLOSED_CEILING as { shell: string }).shell = 'full';
  }).toThrow(TypeError);
});
