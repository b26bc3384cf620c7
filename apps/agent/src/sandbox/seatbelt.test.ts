import { isLetKiteError } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { SANDBOX_EXEC, seatbeltProfile, wrapInSeatbelt } from './seatbelt';
import type { SandboxSpec } from './spec';

const spec: SandboxSpec = {
  readPaths: ['/Users/ann/docs'],
  writePaths: ['/Users/ann/project'],
  denyPaths: ['/Users/ann/project/.env', '/Users/ann/.ssh'],
  tmpDir: '/private/var/folders/xy/T/letkite-1',
  allowTcp: false,
};

const lines = (profile: string) => profile.trimEnd().split('\n');

describe('seatbeltProfile', () => {
  test('denies by default and allows only the listed trees', () => {
    const profile = seatbeltProfile(spec);
    expect(lines(profile).slice(0, 2)).toEqual(['(version 1)', '(deny default)']);
    expect(profile).toContain('(allow file-read* file-map-executable (subpath "/Users/ann/docs"))');
    expect(profile).toContain(
      '(allow file-read* file-write* file-map-executable (subpath "/Users/ann/project") (subpath "/private/var/folders/xy/T/letkite-1"))',
    );
    expect(profile).not.toMatch(/file-write\*[^\n]*\/Users\/ann\/docs/);
    expect(profile).not.toContain('(allow default)');
  });

  test('denies the deny paths for reading and writing, after every allow rule (the later rule wins)', () => {
    const all = lines(seatbeltProfile(spec));
    const deny = all.findIndex((l) => l.startsWith('(deny file-read* file-write*'));
    expect(all[deny]).toBe(
      '(deny file-read* file-write* (subpath "/Users/ann/project/.env") (subpath "/Users/ann/.ssh"))',
    );
    expect(deny).toBe(all.length - 1);
    expect(all.slice(0, deny).every((l) => !l.startsWith('(deny') || l === '(deny default)')).toBe(true);
  });

  test('allows no network unless TCP is allowed', () => {
    expect(seatbeltProfile(spec)).not.toMatch(/network|system-socket/);
    expect(seatbeltProfile({ ...spec, allowTcp: [] })).not.toMatch(/network|system-socket/);
    expect(seatbeltProfile({ ...spec, allowTcp: true })).toContain('(allow network*)');
    const ports = seatbeltProfile({ ...spec, allowTcp: [5432, 443] });
    expect(ports).toContain('(allow network-outbound (remote tcp "*:5432") (remote tcp "*:443"))');
    expect(ports).not.toContain('network*');
    expect(ports).not.toContain('network-bind');
  });

  test('escapes quotes and backslashes so a path cannot add rules', () => {
    const profile = seatbeltProfile({ ...spec, readPaths: ['/tmp/a") (allow default) ("', '/tmp/b\\'] });
    expect(profile).toContain('(subpath "/tmp/a\\") (allow default) (\\"")');
    expect(profile).toContain('(subpath "/tmp/b\\\\")');
    expect(lines(profile).some((l) => l.startsWith('(allow default)'))).toBe(false);
  });

  test('refuses control characters and relative paths', () => {
    for (const bad of [
      { ...spec, readPaths: ['/tmp/a\n(allow default)'] },
      { ...spec, writePaths: ['project'] },
    ]) {
      let caught: unknown;
      try {
        seatbeltProfile(bad);
      } catch (err) {
        caught = err;
      }
      expect(isLetKiteError(caught, 'invalid_params')).toBe(true);
    }
  });
});

test('wrapInSeatbelt runs /usr/bin/sandbox-exec with the profile inline', () => {
  const launch = wrapInSeatbelt(spec, ['/bin/sh', '-c', 'ls']);
  expect(launch).toEqual({ file: SANDBOX_EXEC, args: ['-p', seatbeltProfile(spec), '--', '/bin/sh', '-c', 'ls'] });
  expect(SANDBOX_EXEC).toBe('/usr/bin/sandbox-exec');
});
