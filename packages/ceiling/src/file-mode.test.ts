import { expect, test } from 'vitest';
import { checkCeilingFileMode } from './file-mode';

const REGULAR = 0o100000;

test.each([
  ['root-owned 0644', 0, REGULAR | 0o644, [0], []],
  ['root-owned 0600', 0, REGULAR | 0o600, [0], []],
  ['owned by the agent user when that user is expected', 998, REGULAR | 0o640, [0, 998], []],
  ['owned by someone else', 1000, REGULAR | 0o644, [0], ['wrong_owner']],
  ['group-writable', 0, REGULAR | 0o664, [0], ['group_writable']],
  ['world-writable', 0, REGULAR | 0o646, [0], ['other_writable']],
  ['everything wrong at once', 1000, REGULAR | 0o666, [0], ['wrong_owner', 'group_writable', 'other_writable']],
  ['a directory', 0, 0o040755, [0], ['not_a_regular_file']],
  ['permission bits only', 0, 0o644, [0], []],
  ['no expected owner at all', 0, REGULAR | 0o644, [], ['wrong_owner']],
] as const)('%s → %j', (_, uid, mode, expectedUids, codes) => {
  expect(checkCeilingFileMode({ uid, mode, expectedUids }).map((p) => p.code)).toEqual(codes);
});

test('the messages say what is wrong and quote the mode', () => {
  const [owner, group] = checkCeilingFileMode({ uid: 1000, mode: REGULAR | 0o664, expectedUids: [0] });
  expect(owner?.message).toContain('uid 1000');
  expect(group?.message).toContain('0664');
});
