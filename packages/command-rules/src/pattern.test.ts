import { describe, expect, test } from 'vitest';
import { isProtectedTarget } from './builtin-layers';
import { parseCommandPolicy } from './parse-policy';
import { defaultTrustedDirs } from './paths';
import { certainMatch, compilePattern, matchPattern, maybeMatch, noMatch, PatternError } from './pattern';
import { sedScriptRunsCommands } from './sed-script';
import { decodeAnsiC, literalArg, unknownArg } from './words';

const trustedDirs = new Set(defaultTrustedDirs);
const proof = { needsProof: true, trustedDirs };
const evidence = { needsProof: false, trustedDirs };
const argv = (...words: string[]) => words.map(literalArg);

describe('rule patterns', () => {
  test.each([
    ['ls *', ['ls'], certainMatch],
    ['ls *', ['ls', '-la', 'x'], certainMatch],
    ['ls', ['ls', '-la'], noMatch],
    ['ls -la', ['ls', '-la'], certainMatch],
    ['git push *', ['git', 'pull'], noMatch],
    ['cat *.md', ['cat', 'a.md'], certainMatch],
    ['cat "*.md"', ['cat', 'a.md'], noMatch],
    ['cat "*.md"', ['cat', '*.md'], certainMatch],
    ['x [ab]', ['x', 'b'], certainMatch],
    ['x [!ab]', ['x', 'b'], noMatch],
    ['sed ** -i **', ['sed', 'a', '-i', 'f'], certainMatch],
    ['sed ** -i **', ['sed', 'a', 'f'], noMatch],
    ['cat *', ['/usr/bin/cat'], certainMatch],
    ['cat *', ['./cat'], noMatch],
    ['cat *', ['/tmp/cat'], noMatch],
    ['cat *', ['bin/cat'], noMatch],
    ['/usr/bin/cat *', ['cat'], certainMatch],
    ['/usr/bin/cat *', ['/bin/cat'], noMatch],
  ] as const)('%s allows %j: %i', (pattern, words, expected) => {
    expect(matchPattern(compilePattern(pattern), argv(...words), proof)).toBe(expected);
  });

  test('deny-side matching looks at the basename anywhere, ignoring case and .exe', () => {
    const pattern = compilePattern('curl *');
    expect(matchPattern(pattern, argv('/tmp/x/curl'), evidence)).toBe(certainMatch);
    expect(matchPattern(pattern, argv('C:\\tools\\CURL.exe'), evidence)).toBe(certainMatch);
    expect(matchPattern(pattern, argv('curly'), evidence)).toBe(noMatch);
  });

  test('unknown words may match but never prove', () => {
    const pattern = compilePattern('git push --force');
    const args = [literalArg('git'), literalArg('push'), unknownArg('$X', true)];
    expect(matchPattern(pattern, args, evidence)).toBe(maybeMatch);
    expect(matchPattern(pattern, args, proof)).not.toBe(certainMatch);
    expect(matchPattern(compilePattern('git push *'), args, proof)).toBe(certainMatch);
  });

  test.each(["ls 'x", 'ls "x', 'ls \\', '', '*', '** x', 'bin/ls'])('%j is not a pattern', (source) => {
    expect(() => compilePattern(source)).toThrow(PatternError);
  });

  test('parseCommandPolicy reports every bad pattern with its path', () => {
    expect(() => parseCommandPolicy({ rules: [{ match: "a 'b", verdict: 'deny' }], allow: ['x "y'] })).toThrow(
      /rules\.0\.match.*allow\.0/,
    );
    expect(() => parseCommandPolicy({ mode: 'sometimes' })).toThrow(/mode/);
    expect(parseCommandPolicy({}).default).toBe('approve');
  });
});

describe('words', () => {
  test.each([
    ['a\\nb', 'a\nb'],
    ['\\x2f', '/'],
    ['\\057', '/'],
    ['\\u00e9', 'é'],
    ["it\\'s", "it's"],
    ['\\cA', '\x01'],
    ['\\q', '\\q'],
  ])("$'%s' is %j", (body, value) => {
    expect(decodeAnsiC(body)).toBe(value);
  });
});

describe('sed scripts', () => {
  test.each([
    ['s/a/b/g', false],
    ['1,5p', false],
    ['/x/d;s/a/b/', false],
    ['y/abc/xyz/', false],
    ['s/a/b/e', true],
    ['s|a|b|w out', true],
    ['1e id', true],
    ['$!e id', true],
    ['w out', true],
    ['/x/ W out', true],
    ['s/e/w/', false],
    ['a hello e w', false],
    ['s/a', true],
    ['{p;e id\n}', true],
  ])('%j runs commands: %s', (script, expected) => {
    expect(sedScriptRunsCommands(script)).toBe(expected);
  });
});

describe('protected targets', () => {
  test.each([
    ['/', true],
    ['/*', true],
    ['//', true],
    ['/.', true],
    ['~', true],
    ['~/', true],
    ['~bob', true],
    ['/usr', true],
    ['/usr/', true],
    ['/etc/*', true],
    ['/us?', true],
    ['C:\\', true],
    ['/usr/local/x', false],
    ['/tmp', false],
    ['build', false],
    ['./', false],
    ['', false],
  ])('%j: %s', (target, expected) => {
    expect(isProtectedTarget(target)).toBe(expected);
  });
});
