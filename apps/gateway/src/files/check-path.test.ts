import { type Ceiling, clampToCeiling, DEFAULT_CEILING } from '@letkite/ceiling';
import { FULL_POLICY, type Policy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { checkPath } from './check-path';

const policy = (over: Partial<Policy>): Policy => ({ ...FULL_POLICY, ...over });
const ceiling = (over: Partial<Ceiling>): Ceiling => ({ ...DEFAULT_CEILING, ...over });

function outcome(p: Policy, c: Ceiling, path: string, mode: 'read' | 'write'): string {
  try {
    checkPath({ machine: { name: 'box' }, policy: p, clamped: clampToCeiling(p, c) }, path, mode);
    return 'ok';
  } catch (err) {
    if (err instanceof LetKiteError) return err.code;
    throw err;
  }
}

describe('checkPath (the gateway pre-check of files and transfers)', () => {
  const srv = policy({ files: [{ path: '/srv/**', access: 'rw' }], deny: ['/srv/secret/**'] });
  const open = ceiling({ files: [{ path: '/**', access: 'rw' }], deny: [] });
  const roCeiling = ceiling({ files: [{ path: '/**', access: 'ro' }], deny: [] });

  test.each([
    ['a path the rules allow', srv, open, '/srv/app/x', 'write', 'ok'],
    ['a path outside every rule answers like a missing one', srv, open, '/etc/passwd', 'read', 'not_found'],
    ['a denied path answers like a missing one', srv, open, '/srv/secret/key', 'read', 'not_found'],
    ['.. cannot walk out of an allowed area', srv, open, '/srv/../etc/passwd', 'read', 'not_found'],
    [
      "a write the ceiling makes read-only is the ceiling's refusal",
      srv,
      roCeiling,
      '/srv/app/x',
      'write',
      'blocked_by_ceiling',
    ],
    ['a read of the same path is fine', srv, roCeiling, '/srv/app/x', 'read', 'ok'],
    [
      "a write the policy makes read-only is the policy's refusal",
      policy({ files: [{ path: '/srv/**', access: 'ro' }] }),
      open,
      '/srv/app/x',
      'write',
      'blocked_by_policy',
    ],
    ['a relative path is left to the agent', srv, open, 'notes.txt', 'read', 'ok'],
    [
      'a rule with ~ leaves the decision to the agent, which knows the home',
      policy({ files: [{ path: '~/**', access: 'rw' }] }),
      open,
      '/etc/passwd',
      'read',
      'ok',
    ],
  ] as const)('%s', (_name, p, c, path, mode, expected) => {
    expect(outcome(p, c, path, mode)).toBe(expected);
  });
});
