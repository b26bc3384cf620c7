import { describe, expect, test } from 'vitest';
import { FileMode, fileModeBits, GitDiffParams, ReadFileParams } from '../ops-files';

describe('FileMode', () => {
  test.each([
    ['0644', 0o644],
    ['644', 0o644],
    ['0o600', 0o600],
    ['0000', 0],
    [420, 0o644],
  ] as const)('%s is %o', (mode, bits) => {
    expect(fileModeBits(FileMode.parse(mode))).toBe(bits);
  });

  test.each(['4755', '0888', 'rw-r--r--', '', 0o1000, -1, 6.5])('%s is refused', (mode) => {
    expect(FileMode.safeParse(mode).success).toBe(false);
  });
});

describe('operation parameters', () => {
  test('a ref that could be read as an option or holds a space is refused', () => {
    for (const ref of ['--output=/tmp/x', '-p', 'a b', 'HEAD;rm']) {
      expect(GitDiffParams.safeParse({ path: '/r', ref }).success, ref).toBe(false);
    }
    for (const ref of ['HEAD~1', 'main', 'a1b2..c3d4', '@{u}', 'origin/main']) {
      expect(GitDiffParams.safeParse({ path: '/r', ref }).success, ref).toBe(true);
    }
  });

  test('a path with a NUL byte is refused by the schema', () => {
    expect(ReadFileParams.safeParse({ path: '/etc/x\0y' }).success).toBe(false);
  });
});
