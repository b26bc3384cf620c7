import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { evaluateCommand } from './evaluate';
import { CommandPolicy } from './policy-schema';
import { loadCommandRules } from './shell-parser';

/**
 * The differential test (issue #11): for a large corpus of commands the rules judge `allow`, run each for real under
 * bash AND dash, under strace, with a PATH holding only tracing shims (every program name on this machine, each a
 * script that does nothing), and check that every program the shell executed was one the rules saw — its name, and
 * its exact argv wherever the rules knew every word. Builtins that run things are covered by the walk itself.
 *
 * The corpus is every `allow` example in this package's tests plus generated variants of everyday commands (the
 * same command inside `$(…)`, backticks, pipes, groups, `if`, `sh -c`, `eval`, wrappers, with a backslash-newline
 * at every position, …). Only what the rules allow is run; programs run only as do-nothing shims, except the
 * shells and a few pure exec wrappers (env, nice, timeout, …) which are the real ones so that what they start is
 * traced too. Writes (`> file`), `kill` and the other builtins with effects outside the shell are not allowed by
 * the policy, and a command that would start a real program by absolute path or `command -p` is left out unless
 * that program only reads.
 */

const strace = ['/usr/bin/strace', '/bin/strace'].find((path) => existsSync(path));
const haveStrace = strace !== undefined && spawnSync(strace, ['-V'], { stdio: 'ignore' }).status === 0;
const shells = ['bash', 'dash'] as const;

/** Real programs, reached through the shim directory: shells and wrappers that only exec what they are given. */
const passThrough = ['bash', 'sh', 'dash', 'env', 'nice', 'nohup', 'timeout', 'stdbuf', 'xargs', 'setsid'];
/** Programs that may run for real when named by an absolute path: they only read. */
const readOnlyReal = new Set([
  ...passThrough,
  'ls',
  'cat',
  'head',
  'tail',
  'wc',
  'grep',
  'egrep',
  'fgrep',
  'stat',
  'du',
  'df',
  'id',
  'whoami',
  'uname',
  'pwd',
  'basename',
  'dirname',
  'seq',
  'true',
  'false',
  'echo',
  'printf',
  'test',
  '[',
  'cut',
  'tr',
  'cmp',
  'diff',
]);

/** Everything allowed, except builtins with effects outside the shell and writes; the opaque checks still apply. */
const policy = CommandPolicy.parse({
  default: 'allow',
  rules: ['>', 'kill', 'ulimit', 'umask', 'disown', 'suspend', 'logout', 'history', 'fc', 'enable', 'source', '.'].map(
    (name) => ({ match: `${name} *`, verdict: 'approve' as const }),
  ),
});

let root = '';
let shimDir = '';
let workDir = '';

beforeAll(async () => {
  await loadCommandRules();
  root = mkdtempSync(join(tmpdir(), 'letkite-differential-'));
  shimDir = join(root, 'shims');
  workDir = join(root, 'work');
  mkdirSync(shimDir);
  mkdirSync(join(workDir, 'src'), { recursive: true });
  for (const file of ['file', 'README.md', 'a', 'b', 'c', 'x', 'src/index.ts', 'package.json'])
    writeFileSync(join(workDir, file), 'hello\nworld\n');
  const shim = join(root, 'shim');
  // only builtins: a shim never starts anything, so every exec in the trace is the shell's own doing
  writeFileSync(shim, '#!/bin/sh\nexit 0\n');
  chmodSync(shim, 0o755);
  const names = new Set<string>();
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) if (!name.includes('/')) names.add(name);
  }
  for (const name of names) {
    if (passThrough.includes(name)) continue;
    symlinkSync(shim, join(shimDir, name));
  }
  for (const name of passThrough) {
    const real = ['/usr/bin', '/bin'].map((dir) => join(dir, name)).find((path) => existsSync(path));
    if (real) symlinkSync(real, join(shimDir, name));
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------------------------
// The corpus

/** Every `[command, 'allow']` example written in a test file of this package. */
function allowedExamples(file: string): string[] {
  const text = readFileSync(join(import.meta.dirname, file), 'utf8');
  const out: string[] = [];
  const pair = /\[\s*('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\$]|\\.)*`)\s*,\s*'allow'\s*\]/g;
  for (let match = pair.exec(text); match; match = pair.exec(text)) {
    out.push(jsStringValue(match[1] as string));
  }
  return out;
}

/** The value of a JavaScript string literal as written in a test table. */
function jsStringValue(literal: string): string {
  const escapes: Record<string, string> = { n: '\n', t: '\t', r: '\r', v: '\v', f: '\f', b: '\b', '0': '\0' };
  return literal
    .slice(1, -1)
    .replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/gs, (_m, esc: string) => {
      if (esc.startsWith('u{')) return String.fromCodePoint(Number.parseInt(esc.slice(2, -1), 16));
      if (/^[ux]/.test(esc) && esc.length > 1) return String.fromCharCode(Number.parseInt(esc.slice(1), 16));
      return escapes[esc] ?? esc;
    });
}

const everyday = [
  'ls -la',
  'ls -la /etc | grep conf',
  'cat file | sort | uniq -c | head -5',
  'grep -rn "TODO" src/',
  'find . -name "*.ts" -type f | xargs grep -l hello',
  'wc -l < file',
  'echo "$HOME" ${HOME} "${HOME:-none}" ${x:-default} ${x#pre} ${x%.txt} ${#x}',
  'echo $(date +%s) `whoami` "$(uname -a)"',
  'x=$(cat file); echo "$x"',
  'for f in a b c; do cat "$f"; done',
  'for i in 1 2 3; do echo $((i * 2)); done',
  'i=0; while [ $i -lt 3 ]; do i=$((i + 1)); done; echo $i',
  'while read -r line; do echo "$line"; done < file',
  'cat file | while read -r a b; do echo "$b"; done',
  'if [ -f file ]; then cat file; else echo none; fi',
  'test -d src && ls src',
  '[[ -f file && -r file ]] && head -1 file',
  'case "$x" in a) echo a;; *) ls;; esac',
  '{ ls; pwd; } | cat',
  '(cd src && ls)',
  'ls; pwd; whoami; id -u',
  'ls || echo none',
  'cat <<EOF\nhello $HOME\nEOF',
  "cat <<'EOF'\nhello $(whoami)\nEOF",
  'cat <<-EOF\n\thello\n\tEOF',
  'cat <<E"O"F\nliteral $x\nEOF',
  'grep hello <<< "hello world"',
  'diff <(ls) <(ls src)',
  'echo {a,b,c}.txt {1..3}',
  "echo $'tab\\there' $'\\x41'",
  'echo "a b"   c\\ d',
  'ls \\\n  -la \\\n  src',
  'printf "%s\\n" a b c | sort -r',
  'head -n 2 file; tail -n 1 file',
  'du -sh . 2>/dev/null | cut -f1',
  'stat -c %s file',
  'env ls -la',
  'env -i ls',
  'nice -n 5 ls',
  'timeout 5 ls -la',
  'nohup ls',
  'time ls',
  'command ls',
  'sh -c "ls -la"',
  "bash -c 'ls src; pwd'",
  "eval 'ls -la'",
  'xargs echo < file',
  'echo a b | xargs -n 1 echo',
  'basename /a/b/c; dirname /a/b/c',
  'seq 1 3 | while read n; do echo $n; done',
  'ls -la | head -3 | tail -1',
  'declare -p HOME',
  'read -r first < file; echo "$first"',
  'echo ${x:-$(whoami)}',
  'echo "${x:-`whoami`}"',
  'echo ${x:+$(ls)}',
  'ls $(echo src)',
  'cat "$(echo file)"',
  'ls -- -x 2>/dev/null',
  'echo a#b # a comment',
];

function variants(command: string, continuations: boolean): string[] {
  const out = [command];
  const single = !command.includes("'") && !command.includes('\n');
  const simple = !/[;&|<>(){}\n]/.test(command);
  out.push(`echo $(${command})`, `${command} | cat`, `{ ${command}; }`, `(${command})`);
  out.push(`if true; then ${command}; fi`, `true && ${command}`, `false || ${command}`);
  out.push(`echo \`${command.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``);
  if (single) out.push(`sh -c '${command}'`, `bash -c '${command}'`, `eval '${command}'`, `x='${command}'; eval "$x"`);
  if (simple) out.push(`env ${command}`, `nice ${command}`, `timeout 5 ${command}`, `command ${command}`);
  // a backslash-newline at every position: inside a word it joins, between words it is a blank
  if (continuations)
    for (let i = 1; i < Math.min(command.length, 16); i++) out.push(`${command.slice(0, i)}\\\n${command.slice(i)}`);
  return out;
}

function corpus(): string[] {
  const examples = [...allowedExamples('evaluate.test.ts'), ...allowedExamples('language-classes.test.ts')];
  return [
    ...new Set([
      ...examples.flatMap((command) => variants(command, false)),
      ...everyday.flatMap((command) => variants(command, true)),
    ]),
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Running and comparing

interface Exec {
  path: string;
  argv: string[] | undefined;
}

/** Runs one command under strace; returns every successful execve after the shell's own. */
function trace(shell: string, command: string): Exec[] {
  const log = join(root, 'trace.log');
  rmSync(log, { force: true });
  spawnSync(
    strace as string,
    ['-f', '-qq', '-s', '65536', '-e', 'trace=execve', '-o', log, '--', join(shimDir, shell), '-c', command],
    {
      cwd: workDir,
      env: { PATH: shimDir, HOME: workDir, LANG: 'C' },
      input: '',
      timeout: 10_000,
      stdio: ['pipe', 'ignore', 'ignore'],
    },
  );
  const execs: Exec[] = [];
  const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n') : [];
  for (const line of lines) {
    const match = /^\d+\s+execve\("((?:[^"\\]|\\.)*)", \[(.*)\](?:\.\.\.)?, .*\) = 0$/.exec(line);
    if (match) execs.push({ path: unescapeC(match[1] as string), argv: parseArgv(match[2] as string) });
  }
  return execs.slice(1);
}

function unescapeC(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)/g, (_m, esc: string) => {
    if (esc.startsWith('x')) return String.fromCharCode(Number.parseInt(esc.slice(1), 16));
    if (/^[0-7]+$/.test(esc)) return String.fromCharCode(Number.parseInt(esc, 8));
    return ({ n: '\n', t: '\t', r: '\r', v: '\v', f: '\f', a: '\x07', b: '\b' } as Record<string, string>)[esc] ?? esc;
  });
}

/** strace's argv list; undefined when it was abbreviated. */
function parseArgv(list: string): string[] | undefined {
  const out: string[] = [];
  const item = /\s*"((?:[^"\\]|\\.)*)"(\.\.\.)?\s*(,|$)/y;
  let at = 0;
  while (at < list.length) {
    item.lastIndex = at;
    const match = item.exec(list);
    if (!match || match[2]) return undefined;
    out.push(unescapeC(match[1] as string));
    at = item.lastIndex;
  }
  return out;
}

/** A word the rules know only in part: expansions, globs, `~`, process substitutions, xargs' input. */
const dynamicWord = /[$`*?[~{<>]/;

/** What the rules saw: the words of every command they judged. */
function seenCommands(command: string): string[][] | undefined {
  const { verdict, reasons } = evaluateCommand(command, policy);
  if (verdict !== 'allow') return undefined;
  const seen = reasons.map((reason) => reason.command).filter((words) => words.length > 0);
  for (const words of seen) {
    const name = words[0] as string;
    // a real program by absolute path, or one found through `command -p`, runs for real: only readers may
    if (name.includes('/') && !readOnlyReal.has(basename(name))) return undefined;
    if (name === 'command' && words.some((word) => /^-[A-Za-z]*p/.test(word))) return undefined;
  }
  return seen;
}

function unexplained(execs: Exec[], seen: string[][]): string[] {
  const problems: string[] = [];
  for (const exec of execs) {
    const name = basename(exec.path);
    // the real shells and exec wrappers: the rules unwrap them, and whatever they start is in the trace too
    if (passThrough.includes(name)) continue;
    const candidates = seen.filter((words) => basename(words[0] as string) === name);
    if (candidates.length === 0) {
      // a wrapper the rules see through (`time ls`) is judged by its inner command, which must be one they saw
      if (!exec.argv || !explainedAsWrapper(exec.argv, seen))
        problems.push(`ran ${name} (${JSON.stringify(exec.argv)}), which the rules never saw`);
      continue;
    }
    if (!exec.argv) continue;
    const args = exec.argv.slice(1);
    const explained = candidates.some(
      (words) =>
        words.some((word) => dynamicWord.test(word)) ||
        (words.length - 1 === args.length && words.slice(1).every((word, i) => word === args[i])),
    );
    if (!explained) problems.push(`ran ${JSON.stringify(exec.argv)}, the rules saw ${JSON.stringify(candidates)}`);
  }
  return problems;
}

/** Whether argv is a wrapper around a command the rules saw: some argv[k…] (k ≥ 1) is that command. */
function explainedAsWrapper(argv: string[], seen: string[][]): boolean {
  for (let k = 1; k < argv.length; k++) {
    const rest = argv.slice(k + 1);
    const found = seen.some(
      (words) =>
        basename(words[0] as string) === basename(argv[k] as string) &&
        (words.some((word) => dynamicWord.test(word)) ||
          (words.length - 1 === rest.length && words.slice(1).every((word, i) => word === rest[i]))),
    );
    if (found) return true;
  }
  return false;
}

describe.skipIf(!haveStrace)('differential: what bash and dash run is what the rules saw', () => {
  test('the corpus is large and mostly allowed', () => {
    const all = corpus();
    const allowed = all.filter((command) => seenCommands(command) !== undefined);
    console.log(`differential corpus: ${all.length} commands, ${allowed.length} allowed`);
    expect(all.length).toBeGreaterThan(2000);
    expect(allowed.length).toBeGreaterThan(1500);
  });

  test.each(shells)(
    'under %s every program that ran was seen by the rules',
    (shell) => {
      const problems: string[] = [];
      let ran = 0;
      let executed = 0;
      for (const command of corpus()) {
        const seen = seenCommands(command);
        if (!seen) continue;
        ran++;
        const execs = trace(shell, command);
        executed += execs.length;
        for (const problem of unexplained(execs, seen)) problems.push(`${JSON.stringify(command)}: ${problem}`);
      }
      if (process.env.LETKITE_DIFFERENTIAL_REPORT)
        writeFileSync(process.env.LETKITE_DIFFERENTIAL_REPORT + shell, problems.join('\n'));
      expect(problems).toEqual([]);
      expect(ran).toBeGreaterThan(1500);
      // the harness sees programs at all (a broken trace would pass every command)
      expect(executed).toBeGreaterThan(ran / 2);
    },
    600_000,
  );

  test("words: bash makes the same words of quotes, escapes, $'…' and braces as the rules do", () => {
    let seed = 20261201;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const pieces = [
      ...['a', '-', '/', '=', '%', ':', ',', 'a#', '!', '^', '@', "''", '""'],
      ...['\\\\', '\\a', '\\ ', '\\n', '\\\n', '\\{a,b}', '\\\\\\\\'],
      ...["'x y'", "'\\n'", '"q\\"w"', '"\\$x"', '"\\\\"', '"a\\\nb"', '"\\a"', '"\\`"'],
      ...["$'\\x41'", "$'\\101'", "$'\\cA'", "$'\\e'", "$'\\''", "$'\\\\'", "$'\\z'", "$'\\x'", "$'\\c'"],
      ...[
        "$'a\\0b'",
        "$'\\u0041'",
        "$'\\\"'",
        '{a,b}',
        '{1..3}',
        '{a}',
        '{,x}',
        'x{a,{b,c}}',
        '{a,b',
        '{a..c..2}',
        'x,y}',
        '{{a,b},c}',
      ],
    ];
    const problems: string[] = [];
    for (let n = 0; n < 300; n++) {
      let word = '';
      const count = 1 + Math.floor(random() * 4);
      for (let i = 0; i < count; i++) word += pieces[Math.floor(random() * pieces.length)];
      if (word.startsWith('#')) continue;
      const command = `printf '%s\\0' ${word}`;
      const result = spawnSync('/bin/bash', ['-c', command], { encoding: 'latin1' });
      if (result.status !== 0) continue;
      const shellWords = result.stdout.split('\0').slice(0, -1);
      const { verdict, reasons } = evaluateCommand(command, policy);
      const seen = reasons.find((reason) => reason.command[0] === 'printf');
      if (verdict !== 'allow' || !seen) continue;
      const ruleWords = seen.command.slice(2);
      if (JSON.stringify(ruleWords) !== JSON.stringify(shellWords))
        problems.push(
          `${JSON.stringify(word)}: bash ${JSON.stringify(shellWords)}, rules ${JSON.stringify(ruleWords)}`,
        );
    }
    expect(problems).toEqual([]);
  }, 600_000);

  test('the harness catches a program the rules did not see', () => {
    const execs = trace('bash', 'l\\\ns -la; ca\\\nt file');
    expect(execs.map((exec) => exec.argv)).toEqual([
      ['ls', '-la'],
      ['cat', 'file'],
    ]);
    expect(unexplained(execs, [['l'], ['s', '-la'], ['ca'], ['t', 'file']])).toHaveLength(2);
    expect(unexplained(trace('dash', 'ls -la'), [['ls', '-l']])).not.toEqual([]);
    expect(unexplained(trace('dash', 'ls -la'), [['ls', '-la']])).toEqual([]);
    // a wrapper is explained only by the command it wraps
    expect(unexplained(trace('dash', 'time ls -la'), [['ls', '-la']])).toEqual([]);
    expect(unexplained(trace('dash', 'time ls -la'), [['ls']])).not.toEqual([]);
  });
});
