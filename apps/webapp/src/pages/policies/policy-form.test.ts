import { parsePolicyToml } from '@letkite/policy';
import { expect, test } from 'vitest';
import { formFromParsed, tomlFromForm } from './policy-form';

test('the form writes TOML that reads back to the same values', () => {
  const parsed = {
    name: 'ops',
    shell: 'full',
    gui: 'off',
    gui_apps: [],
    files: [{ path: '/srv', access: 'rw' }],
    deny: ['~/.ssh'],
    tunnel_targets: ['127.0.0.1:5432'],
    commands: {
      mode: 'shell',
      rulesets: ['no-destructive'],
      default: 'approve',
      rules: [{ match: 'git push *', verdict: 'approve' }],
      allow: [],
    },
    approval: { tools: ['write_file'], approvers: 'any_admin', timeout: 600_000 },
  };
  const form = formFromParsed(parsed);
  expect(form.rules).toBe('approve git push *');
  expect(form.timeout).toBe('10m');
  const toml = tomlFromForm(form, parsed);
  expect(toml).toContain('rules = [\n  { match = "git push *", verdict = "approve" },\n]');
  expect(toml).toContain('files = [\n  { path = "/srv", access = "rw" },\n]');
  expect(toml).toContain('approvers = "any_admin"');
  expect(parsePolicyToml(toml)).toEqual({ version: 1, ...parsed });
});
