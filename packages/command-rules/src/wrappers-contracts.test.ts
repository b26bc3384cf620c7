import { beforeAll, describe, expect, test } from 'vitest';
import { checkContract, mayBeOption, type OptionContract } from './contracts';
import { evaluateCommand } from './evaluate';
import { CommandPolicy, type Verdict } from './policy-schema';
import { compileRuleset } from './ruleset-check';
import { loadCommandRules } from './shell-parser';
import { literalArg, unknownArg } from './words';

beforeAll(async () => {
  await loadCommandRules();
});

const lsOnly = CommandPolicy.parse({ rules: [{ match: 'ls *', verdict: 'allow' }] });
const readonly = CommandPolicy.parse({ rulesets: ['linux-readonly'] });

function verdict(command: string, policy = lsOnly): Verdict {
  return evaluateCommand(command, policy).verdict;
}

describe('known transparent wrappers are judged by their inner command only', () => {
  test.each([
    'env ls -la',
    'env LANG=C ls',
    'env -u HOME ls',
    'timeout 5 ls',
    'timeout -s KILL 5s ls',
    'nice ls',
    'nice -n 10 ls',
    'nohup ls',
    'time ls',
    'time -p ls',
    'command ls',
    'command -p ls',
    'stdbuf -oL ls',
    'exec ls',
    "sh -c 'ls -la'",
    'bash -c ls',
    'bash -e -x -c ls',
    'eval ls -la',
    'xargs ls',
    'env timeout 5 nice ls',
  ])('%s is allow under a policy that allows only ls *', (command) => {
    expect(verdict(command)).toBe('allow');
  });

  test.each([
    ['sudo ls', 'approve'],
    ['time -o /tmp/x ls', 'approve'],
    ['bash --rcfile /tmp/x -i -c ls', 'approve'],
    ['env PATH=/tmp ls', 'approve'],
    ['env -S "ls -la"', 'allow'],
    ['sh -c "$X"', 'approve'],
    ['eval "$X"', 'approve'],
    ['timeout 5 rm x', 'approve'],
    ['mywrapper ls', 'approve'],
  ] as const)('%s → %s', (command, expected) => {
    expect(verdict(command)).toBe(expected);
  });

  test('a rule naming the wrapper still decides it', () => {
    const policy = CommandPolicy.parse({
      rules: [
        { match: 'ls *', verdict: 'allow' },
        { match: 'nohup *', verdict: 'deny' },
      ],
    });
    expect(verdict('nohup ls', policy)).toBe('deny');
  });
});

describe('an unknown wrapper is opaque and its command is judged', () => {
  test.each([
    ['mywrap rm -rf /', 'deny'],
    ['mywrap -q --level 3 /usr/bin/rm -rf /', 'deny'],
    ['mywrap sh -c "ls"', 'approve'],
    ['mywrap dd if=/dev/zero of=/dev/sda', 'deny'],
  ] as const)('%s → %s (even under default allow)', (command, expected) => {
    expect(verdict(command, CommandPolicy.parse({ default: 'allow' }))).toBe(expected);
  });

  test('a program the rules know is not read as a wrapper: echo rm -rf / only prints', () => {
    expect(verdict('echo rm -rf /', readonly)).toBe('allow');
    expect(verdict('grep rm file', readonly)).toBe('allow');
    expect(verdict('man rm', readonly)).toBe('allow');
  });
});

describe('read-only contracts', () => {
  const sort: OptionContract = { flags: 'nru', valued: 'k', long: 'reverse', longValued: 'key' };
  const args = (line: string) => line.split(' ').map(literalArg);

  test.each([
    ['sort -nr f', true],
    ['sort -k2 f', true],
    ['sort -k 2 f', true],
    ['sort --key=2 f', true],
    ['sort --key 2 f', true],
    ['sort -o out f', false],
    ['sort -nro out f', false],
    ['sort --output=out f', false],
    ['sort --rev f', false],
    ['sort -- -o', false],
    ['sort -- f', true],
  ] as const)('%s → %s', (line, ok) => {
    expect(checkContract(sort, args(line)) === undefined).toBe(ok);
  });

  test('a word known only at run time where an option could stand is refused unless every option reads', () => {
    const words = [literalArg('sort'), unknownArg('$X', true)];
    expect(checkContract(sort, words)).toMatch(/may be an option/);
    expect(checkContract({ ...sort, everyOptionReadOnly: true }, words)).toBeUndefined();
  });

  test('mayBeOption: globs and expansions that may start with a dash', () => {
    expect(mayBeOption(literalArg('-o'))).toBe(true);
    expect(mayBeOption(literalArg('file'))).toBe(false);
    expect(mayBeOption(unknownArg('$x', true))).toBe(true);
    expect(mayBeOption({ ...literalArg('*.log'), glob: true, segments: [{ lit: '*.log', quoted: false }] })).toBe(true);
    expect(mayBeOption({ ...literalArg('src/*.ts'), glob: true, segments: [{ lit: 'src/*.ts', quoted: false }] })).toBe(
      false,
    );
  });

  test('requires, needs, maxOperands, operand and operandsNeed', () => {
    const tar: OptionContract = { flags: 'txOf', requires: ['t', 'x'], needs: { x: ['O'] } };
    expect(checkContract(tar, args('tar -tf a'))).toBeUndefined();
    expect(checkContract(tar, args('tar -xf a'))).toMatch(/only with/);
    expect(checkContract(tar, args('tar -xOf a'))).toBeUndefined();
    expect(checkContract(tar, args('tar -f a'))).toMatch(/is needed/);
    expect(checkContract({ maxOperands: 1 }, args('uniq a b'))).toMatch(/more than 1/);
    expect(checkContract({ operand: /^\+/ }, args('date 0101'))).toMatch(/not an operand/);
    expect(checkContract({ flags: 'l', operandsNeed: ['l'] }, args('git-branch new'))).toMatch(/operands need/);
    expect(checkContract({ flags: 'l', operandsNeed: ['l'] }, args('git-branch -l new'))).toBeUndefined();
  });

  test('subcommands with global options before them', () => {
    const log: OptionContract = { subcommand: ['log'], global: { valued: 'C', long: 'no-pager' }, flags: 'p' };
    expect(checkContract(log, args('git -C /srv --no-pager log -p'))).toBeUndefined();
    expect(checkContract(log, args('git -c x=y log'))).toMatch(/not one that keeps/);
    expect(checkContract(log, args('git status'))).toMatch(/subcommand is not log/);
  });
});

describe('a contract must be unambiguous', () => {
  test('a letter listed as a flag and as an option with a value is a load error', () => {
    const broken = {
      name: 'broken',
      description: 'x',
      rules: [
        {
          match: 'yq *',
          verdict: 'allow' as const,
          why: 'x',
          matches: ['yq .a f'],
          notMatches: ['rm'],
          options: { flags: 'o', valued: 'o' },
        },
      ],
    };
    expect(() => compileRuleset(broken)).toThrow(/both with and without a value/);
  });
});
