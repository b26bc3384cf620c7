import { loadCommandRules } from '@letkite/command-rules';
import { parsePolicy } from '@letkite/policy';
import { beforeAll, describe, expect, test } from 'vitest';
import { clampToCeiling } from './clamp-to-ceiling';
import { judgeCommand } from './judge-command';
import { parseCeilingToml } from './parse-ceiling';

beforeAll(async () => {
  await loadCommandRules();
});

const ceiling = parseCeilingToml(
  'version = 1\nshell = "full"\nrules = [ { match = "rm *", verdict = "deny" }, { match = "touch *", verdict = "approve" } ]\n',
);
const open = clampToCeiling(
  parsePolicy({ name: 'open', shell: 'full', commands: { mode: 'shell', default: 'allow' } }),
  ceiling,
);
const allowlisted = clampToCeiling(
  parsePolicy({
    name: 'listed',
    shell: 'full',
    commands: { mode: 'allowlist', default: 'deny', allow: ['python3 *', 'cat *', 'bash *'] },
  }),
  ceiling,
);

describe('exec stdin is judged where a program runs it', () => {
  test.each([
    [['bash'], 'rm -rf /srv/data\n'],
    ['bash -s', 'rm x\n'],
    ['sh', 'echo hi; rm x\n'],
    [['/usr/bin/env', 'dash'], 'r\\m x\n'],
    ['cat notes | bash', 'rm x\n'],
  ] as const)('%j reading a script with a ceiling-denied command is denied by the ceiling', (command, stdin) => {
    const j = judgeCommand(open, ceiling, typeof command === 'string' ? command : [...command], { stdin });
    expect(j.verdict).toBe('deny');
    expect(j.layer).toBe('ceiling');
  });

  test('a shell script on stdin with an approve rule needs an approval', () => {
    expect(judgeCommand(open, ceiling, ['bash'], { stdin: 'touch x\n' }).verdict).toBe('approve');
  });

  test('a harmless script on stdin stays allowed, and data to a non-reader changes nothing', () => {
    expect(judgeCommand(open, ceiling, ['bash'], { stdin: 'echo hello\nls -la\n' }).verdict).toBe('allow');
    expect(judgeCommand(open, ceiling, 'grep -c rm', { stdin: 'rm -rf /\n' }).verdict).toBe('allow');
    expect(judgeCommand(open, ceiling, ['wc', '-l'], { stdin: 'rm x\n' }).verdict).toBe('allow');
    expect(judgeCommand(open, ceiling, ['bash'], { stdin: '' }).verdict).toBe('allow');
  });

  test.each([
    [['python3'], 'import os; os.remove("x")\n'],
    ['python3.11 -', 'print(1)\n'],
    ['perl', 'unlink "x";\n'],
    ['sqlite3 db', '.shell rm x\n'],
    ['ed file', '!rm x\n'],
    ['at now', 'rm x\n'],
  ] as const)('%j with stdin is opaque: approve in shell mode', (command, stdin) => {
    const j = judgeCommand(open, ceiling, typeof command === 'string' ? command : [...command], { stdin });
    expect(j.verdict).toBe('approve');
    expect(j.reasons.some((r) => r.layer === 'opaque')).toBe(true);
  });

  test('allowlist mode refuses interpreters and shells fed stdin, and keeps plain programs', () => {
    expect(judgeCommand(allowlisted, ceiling, ['python3'], { stdin: 'print(1)\n' }).verdict).toBe('deny');
    expect(judgeCommand(allowlisted, ceiling, ['bash'], { stdin: 'echo hi\n' }).verdict).toBe('deny');
    expect(judgeCommand(allowlisted, ceiling, ['cat', '-n'], { stdin: 'rm x\n' }).verdict).toBe('allow');
  });
});
