import { expect, test } from 'vitest';
import { lineDiff } from './line-diff';

test('a changed line shows as removed then added, the rest as the same, with both line numbers', () => {
  const d = lineDiff('a\nb\nc', 'a\nB\nc\nd');
  expect(d.map((l) => [l.kind, l.text])).toEqual([
    ['same', 'a'],
    ['removed', 'b'],
    ['added', 'B'],
    ['same', 'c'],
    ['added', 'd'],
  ]);
  expect(d[3]).toMatchObject({ oldLine: 3, newLine: 3 });
  expect(d[4]).toMatchObject({ newLine: 4 });
});

test('identical texts have no changes', () => {
  expect(lineDiff('x\ny', 'x\ny').every((l) => l.kind === 'same')).toBe(true);
});
