import { describe, expect, test } from 'vitest';
import { builtinPolicies, DEFAULT_SECRET_PATHS, FULL_POLICY, READ_ONLY_POLICY } from './builtins';
import { fileAccess } from './file-access';
import { parsePolicy } from './parse-policy';
import { PathPattern } from './path-pattern';

const home = '/home/kite';

describe('built-in policies', () => {
  test('full: shell full, every path read-write, screen off, commands allowed by default, no tunnels', () => {
    expect(FULL_POLICY).toMatchObject({ name: 'full', shell: 'full', gui: 'off', deny: [], tunnel_targets: [] });
    expect(FULL_POLICY.commands).toMatchObject({ mode: 'shell', default: 'allow' });
    expect(fileAccess('/etc/hosts', { ...FULL_POLICY, home })).toBe('rw');
  });

  test('read-only: no shell, every path read-only, secrets hidden, screen off', () => {
    expect(READ_ONLY_POLICY).toMatchObject({ name: 'read-only', shell: 'off', gui: 'off' });
    expect(READ_ONLY_POLICY.deny).toEqual([...DEFAULT_SECRET_PATHS]);
    expect(fileAccess('/etc/hosts', { ...READ_ONLY_POLICY, home })).toBe('ro');
    expect(fileAccess('/home/kite/.ssh/id_rsa', { ...READ_ONLY_POLICY, home })).toBe('none');
  });

  test('built-ins are valid policies and survive a JSON round trip', () => {
    for (const policy of Object.values(builtinPolicies)) {
      expect(parsePolicy(JSON.parse(JSON.stringify(policy)))).toEqual(policy);
    }
  });

  test('built-ins cannot be changed by a careless caller', () => {
    expect(() => {
      (READ_ONLY_POLICY.deny as string[]).pop();
    }).toThrow(TypeError);
    expect(() => {
      (FULL_POLICY as { shell: string }).shell = 'off';
    }).toThrow(TypeError);
  });

  test('every secret path is a valid pattern', () => {
    for (const path of DEFAULT_SECRET_PATHS) expect(PathPattern.safeParse(path).success).toBe(true);
  });
});
