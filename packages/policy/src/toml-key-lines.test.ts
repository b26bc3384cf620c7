import { expect, test } from 'vitest';
import { keyPathId, lineOf, tomlKeyLines } from './toml-key-lines';

const text = [
  '# a comment with = and [brackets]', // 1
  'a = "x # not a comment"', // 2
  '"quoted key" = 1', // 3
  "b.c = 'literal'", // 4
  'm = """', // 5
  'several', // 6
  'lines"""', // 7
  'arr = [', // 8
  '  1, # one', // 9
  '  { k = "v", n = [2, 3] },', // 10
  ']', // 11
  '[t]', // 12
  'x = 1', // 13
  '[[list]]', // 14
  'y = 1', // 15
  '[[list]]', // 16
  'y = 2', // 17
  '[list.sub]', // 18
  'z = 3', // 19
].join('\n');

test.each([
  [['a'], 2],
  [['quoted key'], 3],
  [['b'], 4],
  [['b', 'c'], 4],
  [['m'], 5],
  [['arr'], 8],
  [['arr', 0], 9],
  [['arr', 1], 10],
  [['arr', 1, 'k'], 10],
  [['arr', 1, 'n', 1], 10],
  [['t'], 12],
  [['t', 'x'], 13],
  [['list', 0, 'y'], 15],
  [['list', 1], 16],
  [['list', 1, 'y'], 17],
  [['list', 1, 'sub', 'z'], 19],
] as const)('%j starts on line %i', (path, line) => {
  expect(tomlKeyLines(text).get(keyPathId(path))).toBe(line);
});

test('an unknown path falls back to its deepest known ancestor', () => {
  expect(lineOf(tomlKeyLines(text), ['arr', 1, 'missing'])).toBe(10);
  expect(lineOf(tomlKeyLines(text), ['nowhere'])).toBeUndefined();
});
