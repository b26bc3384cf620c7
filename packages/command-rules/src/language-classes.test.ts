import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { evaluateCommand } from './evaluate';
import { CommandPolicy, type Verdict } from './policy-schema';
import { loadCommandRules } from './shell-parser';

/**
 * The shell language itself (issue #11): every spelling where bash or dash runs something the rules did not see.
 * Each attack is first run for real by the shells it names, in a throwaway directory, and must leave its mark
 * (the program `pwned`, or a planted `ls`, ran): that proves the spelling works. Then the rules, with a policy
 * that allows everything except what they can see is `pwned`, must not say `allow`.
 */

let root = '';
beforeAll(async () => {
  await loadCommandRules();
  root = mkdtempSync(join(tmpdir(), 'letkite-language-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Everything is allowed except what the rules can see: `pwned`, and `touch PWNED`. */
const open = CommandPolicy.parse({
  default: 'allow',
  rules: [
    { match: 'pwned *', verdict: 'deny' },
    { match: 'touch PWNED', verdict: 'deny' },
  ],
});
/** A policy that allows ordinary reading commands and the builtins, for the must-allow side. */
const everyday = CommandPolicy.parse({
  default: 'approve',
  rules: [
    'ls',
    'cat',
    'echo',
    'printf',
    'id',
    'grep',
    'read',
    'wc',
    'sort',
    'head',
    'true',
    'test',
    '[',
    'declare',
    'env',
    'awk',
  ].map((name) => ({ match: `${name} *`, verdict: 'allow' as const })),
});

type Shell = 'bash' | 'dash';
let counter = 0;

/** Runs a command in a fresh directory; returns whether the attack left its mark. */
function attackRuns(shell: Shell, command: string, env: Record<string, string> = {}): boolean {
  const dir = join(root, `case-${++counter}`);
  const marker = join(dir, 'MARK');
  mkdirSync(join(dir, 'bin'), { recursive: true });
  const mark = `#!/bin/sh\necho "$0 $*" >> '${marker}'\n`;
  writeFileSync(join(dir, 'bin', 'pwned'), mark);
  chmodSync(join(dir, 'bin', 'pwned'), 0o755);
  // planted programs: a PATH, a hash entry or a descriptor number pointing here runs them instead of ls
  for (const planted of ['evil', 'e', '0', '10', '11', '12', '255']) {
    mkdirSync(join(dir, planted));
    writeFileSync(join(dir, planted, 'ls'), mark);
    chmodSync(join(dir, planted, 'ls'), 0o755);
  }
  spawnSync(shell, ['-c', command], {
    cwd: dir,
    env: { PATH: `${join(dir, 'bin')}:/usr/bin:/bin`, HOME: dir, ...env },
    input: '',
    timeout: 5000,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  return existsSync(marker) || readdirSync(dir).includes('PWNED');
}

interface Attack {
  command: string;
  shells: Shell[];
  /** The environment the command meets (a value planted by an earlier command). */
  env?: Record<string, string>;
}

function attacks(title: string, list: Attack[]) {
  describe(title, () => {
    test.each(list.map((attack) => [attack.command, attack] as const))('%j', (_command, attack) => {
      for (const shell of attack.shells) {
        expect(attackRuns(shell, attack.command, attack.env), `${shell} runs it`).toBe(true);
      }
      const { verdict, reasons } = evaluateCommand(attack.command, open);
      expect(verdict, JSON.stringify(reasons)).not.toBe('allow');
    });
  });
}

const both: Shell[] = ['bash', 'dash'];
const bash: Shell[] = ['bash'];
const planted = { x: 'a[$(pwned)]', y: 'a[$(pwned)]' };

attacks('assignments that change what runs, in any syntax', [
  { command: 'PATH=evil ls', shells: both },
  { command: 'export PATH=evil; ls', shells: both },
  { command: ': $((PATH=0)); ls', shells: both },
  { command: ': $[PATH=0]; ls', shells: bash },
  { command: '((PATH=0)); ls', shells: bash },
  { command: 'x=0; (( PATH = x )); ls', shells: bash },
  { command: 'let PATH=0; ls', shells: bash },
  { command: 'for PATH in evil; do ls; done', shells: both },
  { command: 'read PATH <<< evil; ls', shells: bash },
  { command: 'read PATH <<EOF\nevil\nEOF\nls', shells: both },
  { command: 'read -r x PATH <<< "a evil"; ls', shells: bash },
  { command: 'declare PATH=evil; ls', shells: bash },
  { command: 'typeset PATH=evil; ls', shells: bash },
  { command: 'f() { local PATH=evil; ls; }; f', shells: both },
  { command: 'readonly PATH=evil; ls', shells: both },
  { command: 'command export PATH=evil; ls', shells: bash },
  { command: 'printf -v PATH evil; ls', shells: bash },
  { command: 'getopts e PATH -e; ls', shells: both },
  { command: 'BASH_CMDS[ls]=evil/ls; ls', shells: bash },
  { command: 'declare -A BASH_CMDS=([ls]=evil/ls); ls', shells: bash },
  { command: 'hash -p evil/ls ls; ls', shells: bash },
  { command: 'declare -n r=PATH; r=evil; ls', shells: bash },
  { command: 'x=PATH; declare "$x=evil"; ls', shells: bash },
  { command: 'x=PATH; export $x=evil; ls', shells: both },
  { command: 'exec {PATH}>/dev/null; ls', shells: bash },
  { command: 'set -k; ls PATH=evil', shells: bash },
  { command: 'shopt -s expand_aliases\nalias ls=pwned\nls', shells: bash },
  { command: 'shopt -s expand_aliases\nBASH_ALIASES[ls]=pwned\nls', shells: bash },
  { command: 'unset PATH; : ${PATH:=evil}; ls', shells: both },
  { command: 'unset PATH; echo "${PATH=evil}"; ls', shells: both },
]);

attacks('substitutions in every word context', [
  { command: 'echo ${x#$(pwned)}', shells: both, env: { x: '1' } },
  { command: 'echo ${x##`pwned`}', shells: both, env: { x: '1' } },
  { command: 'echo ${x%%`pwned`}', shells: both, env: { x: '1' } },
  { command: 'echo ${x:+`pwned`}', shells: both, env: { x: '1' } },
  { command: 'echo "${x:-`pwned`}"', shells: both },
  { command: `echo "\${x:-'$(pwned)'}"`, shells: both },
  { command: 'echo ${x=$(pwned)}', shells: both },
  { command: 'echo ${x?`pwned`}', shells: both },
  { command: 'echo ${x:-${y:-`pwned`}}', shells: both },
  { command: 'echo ${x/y/`pwned`}', shells: bash, env: { x: 'y' } },
  { command: 'echo ${x:`pwned`}', shells: bash, env: { x: 'y' } },
  { command: 'cat <<EOF\n`pwned`\nEOF', shells: both },
  { command: 'cat <<-EOF\n\t`pwned`\n\tEOF', shells: both },
  { command: 'cat <<EOF\n${x#`pwned`}\nEOF', shells: both, env: { x: '1' } },
  { command: 'echo `echo \\`pwned\\``', shells: both },
  { command: 'touch <<EOF PWNED\nx\nEOF', shells: both },
  { command: 'case `pwned` in x) ;; esac', shells: both },
  { command: 'for i in `pwned`; do :; done', shells: both },
  { command: 'cat <<< `pwned`', shells: bash },
]);

attacks('arithmetic evaluates variables as code', [
  { command: 'echo $((x))', shells: bash, env: planted },
  { command: 'echo $(( $x + 1 ))', shells: bash, env: planted },
  { command: '(( x ))', shells: bash, env: planted },
  { command: 'let x', shells: bash, env: planted },
  { command: 'for ((i = x; i < 0; i++)); do :; done', shells: bash, env: planted },
  { command: '[[ x -eq 0 ]]', shells: bash, env: planted },
  { command: '[[ $x -eq 0 ]]', shells: bash, env: planted },
  { command: 'echo ${a[x]}', shells: bash, env: planted },
  { command: 'a=(1); echo ${a[$x]}', shells: bash, env: planted },
  { command: 'echo ${y:x}', shells: bash, env: { ...planted, y: 'abc' } },
  { command: 'echo ${y:0:$x}', shells: bash, env: { ...planted, y: 'abc' } },
  { command: 'declare -a arr; arr[x]=1', shells: bash, env: planted },
  { command: "[[ -v 'a[$(pwned)]' ]]", shells: bash },
  { command: '[[ -v $x ]]', shells: bash, env: planted },
  { command: "test -v 'a[$(pwned)]'", shells: bash },
  { command: '[ -v "$x" ]', shells: bash, env: planted },
  { command: 'echo ${!y}', shells: bash, env: planted },
  { command: 'echo ${x@P}', shells: bash, env: { x: '$(pwned)' } },
  { command: 'read "$x" <<< 1', shells: bash, env: planted },
  { command: 'printf -v "$x" 1', shells: bash, env: planted },
  { command: 'declare "$x"=1', shells: bash, env: planted },
  { command: 'declare -n r=$x; echo $r', shells: bash, env: planted },
  { command: 'declare -i n; n=$x', shells: bash, env: planted },
  { command: 'declare -i n=$x', shells: bash, env: planted },
  { command: 'f() { local -i n=$x; }; f', shells: bash, env: planted },
  { command: "compgen -W '$(pwned)' a", shells: bash },
  { command: 'compgen -C pwned a', shells: bash },
  { command: "n=1; eval 'n=$x'; echo $((n))", shells: bash, env: planted },
  { command: 'n=1; for i in 1 2; do echo $((n)); n=$x; done', shells: bash, env: planted },
  {
    command: 'n=1; while :; do echo $((n)); [ "$n" = 1 ] || break; read -r n <<< "$x"; done',
    shells: bash,
    env: planted,
  },
  { command: 'n=1; for ((k = 0; k < 2; k++)); do echo $((n)); n=$x; done', shells: bash, env: planted },
  { command: 'n=1; f() { echo $((n)); }; n=$x; f', shells: bash, env: planted },
  { command: 'n=1; f() { n=$x; }; f; echo $((n))', shells: bash, env: planted },
  { command: 'n=1; declare -n r=n; r=$x; echo $((n))', shells: bash, env: planted },
  { command: 'n=1; declare -n r; r=n; r=$x; echo $((n))', shells: bash, env: planted },
  {
    command: 'n=1; while :; do echo $((n)); [ "$n" = 1 ] || break; echo "(("; read -r n <<< "$x"; echo "))"; done',
    shells: bash,
    env: planted,
  },
]);

attacks('the shell lexes differently from the grammar', [
  { command: 'pwn\\\ned', shells: both },
  { command: 'echo x; pw\\\nned', shells: both },
  { command: 'echo a\r#$(pwned)', shells: both },
  { command: 'echo a\f#`pwned`', shells: both },
  { command: 'echo a\v#`pwned`', shells: both },
  { command: 'touch "P"\\WNED', shells: both },
  { command: "touch 'PW'\\NED", shells: both },
  { command: 'touch P"W"\\N$\'E\'D', shells: bash },
  { command: '"pw"\\ned', shells: both },
  { command: "p'w'\\ned", shells: both },
  { command: "pwn$'\\0x'ed", shells: bash },
  { command: "touch PW$'NED\\x00.txt'", shells: bash },
]);

test('a word the grammar splits at a quote-escape boundary is still one word: `rm "-"\\rf /` is a wipe', () => {
  for (const command of ['rm "-"\\rf /', "rm '-r'\\f /", 'rm -"r"\\f /', 'r"m" -rf /', 'rm "-rf" "/"\\*']) {
    expect(evaluateCommand(command, open).verdict, command).toBe('deny');
  }
});

describe('the language level does not over-block', () => {
  const cases: Array<[string, Verdict]> = [
    ['while read -r line; do echo "$line"; done < file', 'allow'],
    ['while IFS= read -r line; do echo "$line"; done < file', 'allow'],
    ['while IFS=: read -r user _ uid _; do echo "$user $uid"; done < /etc/passwd', 'allow'],
    ['IFS=: ls', 'approve'],
    ['IFS=: read -r a; IFS=/ cat x', 'approve'],
    ['echo $(( $(id -u) * 2 )) $(( $(wc -l < file) + 1 )) $(( $(cat file | wc -l) ))', 'allow'],
    ['echo $(( $(cat file) + 1 ))', 'approve'],
    ['echo $(( $(wc -l < file; cat x) ))', 'approve'],
    ['echo $(( $(cat file || wc -l) ))', 'approve'],
    ['echo $(( $(cat file > x | wc -l) ))', 'approve'],
    ['cat file | while read -r a b; do echo "$b"; done', 'allow'],
    ['declare -p', 'allow'],
    ['declare -p HOME', 'allow'],
    ["awk '$3 > 100 {print $1}' file", 'allow'],
    ['env ls -la', 'allow'],
    ['cat <<E"O"F\nhello $x\nEOF', 'allow'],
    ["cat <<'E'OF\nhello $(x)\nEOF", 'allow'],
    ["cat <<E'OF'\nhello\nEOF", 'allow'],
    ['cat <<\\EOF\n$(x)\nEOF', 'allow'],
    ['cat <<-EOF\n\thello\n\tEOF', 'allow'],
    ['cat <\\\n<E"O"F\nhello $(x)\nEOF', 'allow'],
    ['cat <<E"O"\\\nF\nhello $(x)\nEOF', 'allow'],
    ['echo $(( 1 + 2 ))', 'allow'],
    ['i=0; echo $((i + 1))', 'allow'],
    ['n=3; while [ "$n" -gt 0 ]; do n=$((n - 1)); done; echo $n', 'allow'],
    ['for i in 1 2 3; do echo $((i * 2)); done', 'allow'],
    ['a=(x y); for ((i = 0; i < ${#a[@]}; i++)); do echo "${a[$i]}"; done', 'allow'],
    ['echo $((RANDOM % 10)) $(($# + 1)) $((${#HOME} * 2))', 'allow'],
    ['n=0; while read -r line; do n=$((n + 1)); done < file; echo "$n"', 'allow'],
    ['[[ $# -eq 0 ]] && echo none', 'allow'],
    ['echo ${x:-default} ${y#prefix} ${z%.txt}', 'allow'],
    ['echo "${HOME}/x" ${#x}', 'allow'],
    ['ls \\\n  -la', 'allow'],
    ['ls -la | grep \\\n  foo', 'allow'],
    ['echo a#b', 'allow'],
    ['echo a # comment', 'allow'],
    ['printf "%s\\n" "$x"', 'allow'],
    ['printf "%d\\n" 42', 'allow'],
    ['printf "%d\\n" "$n"', 'allow'],
    ['[ "$n" -gt 0 ] && echo "$n"', 'allow'],
    ['test "$n" -eq 1', 'allow'],
    ['read -r x < file; echo "$x"', 'allow'],
    ['x=$(cat file); echo "$x"', 'allow'],
    ['test -f file && cat file', 'allow'],
    ['[ -n "$x" ] && echo "$x"', 'allow'],
  ];
  test.each(cases)('%j → %s', (command, verdict) => {
    const result = evaluateCommand(command, everyday);
    expect(result.verdict, JSON.stringify(result.reasons)).toBe(verdict);
  });
});

describe('linux-readonly: the language level adds nothing to everyday reading commands', () => {
  const readonly = CommandPolicy.parse({ rulesets: ['linux-readonly'] });
  test.each([
    'while read -r line; do echo "$line"; done < file',
    'declare -p',
    'cat <<E"O"F\nhello $x\nEOF',
    "cat <<'E'OF\nhello\nEOF",
    "awk '$3 > 100 {print $1}' file",
    'env ls -la',
    'i=0; echo $((i + 1))',
    'ls \\\n  -la',
    'echo a#b',
  ])('%j → allow', (command) => {
    const result = evaluateCommand(command, readonly);
    expect(result.verdict, JSON.stringify(result.reasons)).toBe('allow');
  });
});

describe('the classes, as properties', () => {
  const sensitive = [
    'PATH',
    'BASH_ENV',
    'ENV',
    'IFS',
    'CDPATH',
    'HOME',
    'LD_PRELOAD',
    'PYTHONPATH',
    'BASH_CMDS',
    'PS4',
  ];
  const spellings = [
    (v: string) => `${v}=x ls`,
    (v: string) => `export ${v}=x`,
    (v: string) => `declare ${v}=x`,
    (v: string) => `typeset -x ${v}=x`,
    (v: string) => `local ${v}=x`,
    (v: string) => `readonly ${v}=x`,
    (v: string) => `: $((${v}=1))`,
    (v: string) => `: $[${v}=1]`,
    (v: string) => `((${v}=1))`,
    (v: string) => `let ${v}=1`,
    (v: string) => `for ${v} in x; do :; done`,
    (v: string) => `select ${v} in x; do :; done`,
    (v: string) => `read ${v}`,
    (v: string) => `read -a ${v}`,
    (v: string) => `printf -v ${v} x`,
    (v: string) => `mapfile ${v}`,
    (v: string) => `readarray -t ${v}`,
    (v: string) => `getopts ab ${v}`,
    (v: string) => `${v}[0]=x`,
    (v: string) => `declare -n r=${v}`,
    (v: string) => `exec {${v}}>/dev/null`,
    (v: string) => `builtin read ${v}`,
    (v: string) => `: \${${v}:=x}`,
    (v: string) => `echo "\${${v}=x}"`,
  ];
  test.each(sensitive)('assigning %s is never allowed, in any syntax', (variable) => {
    for (const spell of spellings) {
      const command = spell(variable);
      expect(evaluateCommand(command, open).verdict, command).not.toBe('allow');
    }
  });

  const contexts = [
    (s: string) => `echo \${x#${s}}`,
    (s: string) => `echo \${x##${s}}`,
    (s: string) => `echo \${x%${s}}`,
    (s: string) => `echo \${x%%${s}}`,
    (s: string) => `echo \${x:-${s}}`,
    (s: string) => `echo \${x-${s}}`,
    (s: string) => `echo \${x:+${s}}`,
    (s: string) => `echo \${x+${s}}`,
    (s: string) => `echo \${x:=${s}}`,
    (s: string) => `echo \${x=${s}}`,
    (s: string) => `echo \${x:?${s}}`,
    (s: string) => `echo \${x/a/${s}}`,
    (s: string) => `echo \${x//${s}/a}`,
    (s: string) => `echo \${x:-\${y:-${s}}}`,
    (s: string) => `echo "\${x:-${s}}"`,
    (s: string) => `echo "\${x#${s}}"`,
    (s: string) => `case ${s} in *) ;; esac`,
    (s: string) => `case x in ${s}) ;; esac`,
    (s: string) => `for i in ${s}; do :; done`,
    (s: string) => `cat <<< ${s}`,
    (s: string) => `cat <<EOF\n${s}\nEOF`,
    (s: string) => `cat <<-EOF\n\t${s}\n\tEOF`,
    (s: string) => `cat > ${s} < /dev/null`,
    (s: string) => `echo $(( ${s} ))`,
    (s: string) => `echo \${a[${s}]}`,
    (s: string) => `[[ ${s} == x ]]`,
    (s: string) => `echo x${s}y`,
    (s: string) => `echo "x${s}y"`,
  ];
  const substitutions = ['$(pwned)', '`pwned`', '$(echo; pwned)', '<(pwned)'];
  test.each(substitutions)('%s is found in every word context', (substitution) => {
    for (const context of contexts) {
      if (substitution.startsWith('<(') && /"|<<|\$\(\(|\[/.test(context('X'))) continue;
      const command = context(substitution);
      const { verdict, reasons } = evaluateCommand(command, open);
      expect(verdict, `${command}: ${JSON.stringify(reasons)}`).not.toBe('allow');
    }
  });

  test('a backslash-newline anywhere inside a word never hides the word from the rules', () => {
    const word = 'pwned';
    for (let i = 1; i < word.length; i++) {
      const command = `echo ok; ${word.slice(0, i)}\\\n${word.slice(i)} x`;
      expect(evaluateCommand(command, open).verdict, command).not.toBe('allow');
    }
  });

  test('characters the shell reads as part of a word are never skipped as blanks', () => {
    for (const ch of ['\r', '\v', '\f', '\u00a0', '\u2003', '\u3000', '\ufeff', '\0']) {
      const command = `echo a${ch}#$(pwned)`;
      expect(evaluateCommand(command, open).verdict, JSON.stringify(command)).not.toBe('allow');
    }
  });
});
