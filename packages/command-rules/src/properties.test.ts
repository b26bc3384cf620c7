import { beforeAll, describe, expect, test } from 'vitest';
import { evaluateCommand } from './evaluate';
import { CommandPolicy, type CommandRule, verdicts } from './policy-schema';
import { loadCommandRules } from './shell-parser';
import { verdictStrictness } from './verdict';

beforeAll(async () => {
  await loadCommandRules();
});

/** A small deterministic generator (mulberry32), so a failure can be replayed from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pieces = [
  'ls',
  'cat',
  'rm',
  '-rf',
  '/',
  'sh',
  '-c',
  'bash',
  'sudo',
  'env',
  'echo',
  'git',
  'push',
  '--force',
  'find',
  '-exec',
  '{}',
  '\\;',
  ';',
  '|',
  '&&',
  '||',
  '&',
  '$(',
  ')',
  '`',
  "'",
  '"',
  '$x',
  '${y}',
  '$IFS',
  '{a,b}',
  '*',
  '?',
  '~',
  '>',
  '>>',
  '<',
  '<<EOF',
  '<<<',
  '2>&1',
  '/dev/sda',
  '/dev/null',
  '(',
  '{',
  '}',
  '!',
  '#',
  '\n',
  '\\',
  "$'\\x41'",
  'eval',
  'xargs',
  'python3',
  'awk',
  'sed',
  'e',
  'w',
  'curl',
  'reboot',
  'x=1',
  'PATH=/tmp',
  'if',
  'then',
  'fi',
  'do',
  'done',
  'for',
  'in',
  'case',
  'esac',
  '((',
  '))',
  '[[',
  ']]',
  'a[$(id)]',
  'EOF',
  '\t',
  ' ',
  '\u0000',
  '\u202e',
  'é',
];

function garbage(next: () => number): string {
  const length = 1 + Math.floor(next() * 14);
  let out = '';
  for (let i = 0; i < length; i++) {
    if (next() < 0.15) out += String.fromCharCode(Math.floor(next() * 0x7f));
    else out += pieces[Math.floor(next() * pieces.length)];
    if (next() < 0.6) out += ' ';
  }
  return out;
}

const readonly = CommandPolicy.parse({ rulesets: ['linux-readonly'], rules: [{ match: 'rm *', verdict: 'allow' }] });
const permissive = CommandPolicy.parse({ default: 'allow' });
const iterations = 1500;

describe('properties over generated command lines', () => {
  test('garbage never throws and is never allowed unless every command is proven', () => {
    const next = random(1);
    for (let i = 0; i < iterations; i++) {
      const command = garbage(next);
      const result = evaluateCommand(command, readonly);
      expect(verdicts).toContain(result.verdict);
      if (result.verdict === 'allow') {
        // the proof: nothing stricter than allow anywhere, and every command named by an allow rule
        expect(
          result.reasons.every((reason) => reason.verdict === 'allow'),
          command,
        ).toBe(true);
        expect(
          result.reasons.every((reason) => reason.layer === 'rule' || reason.layer === 'ruleset'),
          command,
        ).toBe(true);
        expect(result.reasons.length, command).toBeGreaterThan(0);
      }
    }
  });

  test('text that does not parse is never allowed, even when everything else is', () => {
    const next = random(2);
    let unparsable = 0;
    for (let i = 0; i < iterations; i++) {
      const command = garbage(next);
      const result = evaluateCommand(command, permissive);
      if (result.reasons.some((reason) => reason.layer === 'parse' || reason.layer === 'opaque')) {
        unparsable++;
        expect(result.verdict, command).not.toBe('allow');
      }
    }
    expect(unparsable).toBeGreaterThan(100);
  });

  test('adding a deny rule never makes a verdict less strict', () => {
    const next = random(3);
    const denials: CommandRule[] = [
      { match: 'rm *', verdict: 'deny' },
      { match: 'ls -la', verdict: 'deny' },
      { match: 'sh *', verdict: 'deny' },
      { match: 'echo ** x **', verdict: 'deny' },
      { match: '/usr/bin/git push *', verdict: 'deny' },
    ];
    for (let i = 0; i < iterations; i++) {
      const command = garbage(next);
      const base = CommandPolicy.parse({
        rules: [
          { match: 'ls *', verdict: 'allow' },
          { match: 'echo *', verdict: 'allow' },
        ],
        rulesets: ['no-destructive'],
      });
      const before = evaluateCommand(command, base).verdict;
      const extra = denials[i % denials.length] as CommandRule;
      for (const position of ['first', 'last'] as const) {
        const rules = position === 'first' ? [extra, ...base.rules] : [...base.rules, extra];
        const after = evaluateCommand(command, { ...base, rules }).verdict;
        expect(verdictStrictness(after), `${command} with ${extra.match} ${position}`).toBeGreaterThanOrEqual(
          verdictStrictness(before),
        );
      }
    }
  });

  test('an argv of garbage words never throws', () => {
    const next = random(4);
    for (let i = 0; i < iterations; i++) {
      const argv = Array.from({ length: 1 + Math.floor(next() * 5) }, () => garbage(next));
      expect(verdicts).toContain(evaluateCommand(argv, readonly).verdict);
      expect(verdicts).toContain(evaluateCommand(argv, { ...readonly, mode: 'allowlist', allow: ['ls *'] }).verdict);
    }
  });

  test('allowlist mode never allows text with shell syntax in it', () => {
    const next = random(5);
    const policy = CommandPolicy.parse({ mode: 'allowlist', allow: ['ls *', 'echo *', 'cat *'] });
    for (let i = 0; i < iterations; i++) {
      const command = garbage(next);
      const result = evaluateCommand(command, policy);
      if (result.verdict === 'allow') {
        expect(command, command).not.toMatch(/[;|&<>(){}$`*?~\n]|\[|^\s*#/);
      }
    }
  });
});
