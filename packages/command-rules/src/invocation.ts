import { type Analysis, maxNestingDepth, type StdinFeed } from './analysis';
import { awkProgramRunsOrWrites } from './awk-program';
import { hasOption, type OptionSpec, optionValue, type ParsedOptions, parseOptions } from './options';
import { evidenceName } from './paths';
import { sedScriptRunsCommands } from './sed-script';
import { assignmentConcern, checkShellBuiltin } from './shell-language';
import type { Arg } from './types';
import { analyzeShellText, decodeBase64Text } from './walk';
import { literalArg, unknownArg } from './words';

/** Variables that decide which program or code runs; setting them makes what follows opaque. */
const runtimeVariable =
  /^(PATH|LD_[A-Z_]+|DYLD_[A-Z_]+|BASH_ENV|ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|IFS|PS4|PROMPT_COMMAND|PYTHON(PATH|STARTUP|HOME|INSPECT)|NODE_OPTIONS|NODE_PATH|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|GIT_(SSH|SSH_COMMAND|EXTERNAL_DIFF|PAGER|EDITOR|SEQUENCE_EDITOR|ASKPASS|EXEC_PATH|TEMPLATE_DIR|PROXY_COMMAND|CONFIG.*)|PAGER|MANPAGER|SYSTEMD_PAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|BROWSER|SSH_ASKPASS|SUDO_ASKPASS|GCONV_PATH)$/;

export function isRuntimeVariable(name: string): boolean {
  return runtimeVariable.test(name);
}

/** One command being looked at: unwrapping and the opaque checks need its words, input and depth. */
class Invocation {
  constructor(
    readonly args: Arg[],
    readonly acc: Analysis,
    readonly depth: number,
    readonly stdin: StdinFeed | undefined,
    readonly program: string,
  ) {}

  /** The inner command of a wrapper, checked like any other. */
  runInner(inner: readonly Arg[], stdin: StdinFeed | undefined = this.stdin): void {
    if (inner.length > 0) analyzeInvocation([...inner], this.acc, this.depth + 1, stdin);
  }

  /** Shell code carried in a word (`sh -c`, `eval`, `su -c`), parsed and checked recursively. */
  runShellWord(arg: Arg | undefined, what: string): void {
    if (!arg) return;
    if (arg.dynamic) this.opaque(`${what} is known only at run time`);
    else analyzeShellText(arg.value, this.acc, this.depth + 1);
  }

  runShellText(text: string): void {
    analyzeShellText(text, this.acc, this.depth + 1);
  }

  /** Shell code made of several words joined with spaces (`eval a b`, `watch cmd args`). */
  runJoinedWords(words: readonly Arg[], what: string): void {
    if (words.length === 0) return;
    if (words.some((word) => word.dynamic)) this.opaque(`${what} is known only at run time`);
    else this.runShellText(words.map((word) => word.value).join(' '));
  }

  opaque(message: string): void {
    this.acc.opaque(this.args, message);
  }

  /**
   * A known transparent wrapper (`env`, `timeout`, `nice`, `sh -c 'literal'`, …): its inner command is judged, and
   * the wrapper itself is not held to the policy's default unless a rule names it.
   */
  transparent(): void {
    this.acc.markTransparent(this.args);
  }

  /** A shell or interpreter that reads its program from standard input. */
  programFromStdin(kind: 'shell' | 'interpreter'): void {
    const feed = this.stdin;
    if (!feed) return;
    if (feed.known && kind === 'shell') {
      this.runShellText(feed.text);
      return;
    }
    this.opaque(`a program fed through ${feed.what} to ${this.program}`);
    const evidence = kind === 'shell' && !feed.known ? feed.evidence?.() : undefined;
    if (evidence) this.runShellText(evidence);
  }

  parse(spec: OptionSpec, start = 1): ParsedOptions {
    const parsed = parseOptions(this.args, spec, start);
    if (parsed.unknown) this.opaque(`${this.program}'s options are known only at run time`);
    // `env NAME=… CMD`, `sudo NAME=… CMD`: the same list as assignments in the shell (src/environment.ts)
    for (const assignment of parsed.assignments) {
      const name = assignment.value.slice(0, assignment.value.indexOf('='));
      const concern = assignmentConcern(name);
      if (concern) this.acc.opaque(this.args, concern.message, concern.verdict);
    }
    return parsed;
  }

  /** A plain wrapper: options, then the inner command with its own arguments. */
  unwrap(spec: OptionSpec): ParsedOptions {
    const parsed = this.parse(spec);
    if (!parsed.unknown && !parsed.noCommand) this.runInner(parsed.rest);
    return parsed;
  }
}

/** Looks at one command: records it, unwraps wrappers into inner commands, flags what cannot be seen through. */
export function analyzeInvocation(args: Arg[], acc: Analysis, depth: number, stdin: StdinFeed | undefined): void {
  if (depth > maxNestingDepth) {
    acc.opaque(args, `commands nested more than ${maxNestingDepth} levels deep`);
    return;
  }
  if (!acc.addCommand(args)) return;
  const name = args[0];
  if (!name) return;
  if (name.dynamic || name.glob) {
    acc.opaque(args, 'the program name is known only at run time');
    return;
  }
  const program = evidenceName(name.value);
  const invocation = new Invocation(args, acc, depth, stdin, program);
  const handler = handlers[program] ?? familyHandlers.find(([family]) => family.test(program))?.[1];
  if (handler) handler(invocation);
  else unknownWrapper(args, acc, depth, program);
  checkArithmeticArguments(invocation);
  checkShellBuiltin(args, acc, program);
}

type Handler = (inv: Invocation) => void;

const wrapperSpecs: Record<string, OptionSpec> = {
  sudo: {
    short: 'ugCDhpRrtTU',
    long: [
      'user',
      'group',
      'close-from',
      'chdir',
      'host',
      'prompt',
      'chroot',
      'role',
      'type',
      'command-timeout',
      'other-user',
    ],
    assignments: true,
    noCommand: 'eVv',
  },
  doas: { short: 'uC' },
  pkexec: { long: ['user'] },
  nice: { short: 'n', long: ['adjustment'] },
  ionice: { short: 'cn', long: ['class', 'classdata'], noCommand: 'pPu' },
  nohup: {},
  timeout: { short: 'sk', long: ['signal', 'kill-after'], leading: 1 },
  time: { short: 'fo', long: ['format', 'output'] },
  stdbuf: { short: 'ioe', long: ['input', 'output', 'error'] },
  setsid: {},
  command: { noCommand: 'vV' },
  builtin: {},
  exec: { short: 'a' },
  chroot: { long: ['userspec', 'groups'], leading: 1 },
  nsenter: { short: 'tSG', optionalShort: 'muinpUCTrw', long: ['target', 'setuid', 'setgid'] },
  unshare: {
    optionalShort: 'muinpUCT',
    long: ['propagation', 'setgroups', 'map-user', 'map-group', 'map-users', 'map-groups'],
  },
  taskset: { leading: 1, noCommand: 'p' },
  chrt: { short: 'TPD', leading: 1, noCommand: 'p' },
  strace: { short: 'abeEIoOpPsSuUX' },
  'systemd-run': {
    short: 'pEuHM',
    long: [
      'property',
      'setenv',
      'unit',
      'host',
      'machine',
      'slice',
      'description',
      'uid',
      'gid',
      'nice',
      'working-directory',
      'service-type',
      'on-calendar',
      'on-active',
    ],
  },
  caffeinate: { short: 'tw' },
  'ssh-agent': { short: 'aEPt', noCommand: 'kD' },
  unbuffer: {},
  catchsegv: {},
  'dbus-run-session': {},
  proxychains: { short: 'f' },
  proxychains4: { short: 'f' },
  torsocks: {},
  firejail: {},
  // exec wrappers and loaders the catastrophic layer sees through (issue #11)
  setpriv: {
    long: [
      'reuid',
      'regid',
      'groups',
      'inh-caps',
      'ambient-caps',
      'bounding-set',
      'securebits',
      'pdeathsig',
      'selinux-label',
      'apparmor-profile',
      'landlock-access',
      'landlock-rule',
      'ruid',
      'euid',
      'rgid',
      'egid',
    ],
    noCommand: 'd',
  },
  prlimit: { short: 'p', optionalShort: 'cdefilmnqrstuvxy', long: ['pid', 'output'] },
  logsave: { leading: 1 },
  fakeroot: { short: 'lfisb' },
  faketime: { short: 'm', leading: 1 },
  eatmydata: {},
  nocache: {},
  valgrind: {},
  ltrace: { short: 'aAeEflnopsuwxXF' },
  numactl: {
    short: 'NmCipPw',
    long: ['cpunodebind', 'membind', 'physcpubind', 'interleave', 'preferred', 'weighted-interleave'],
  },
  chpst: { short: 'uUe/nlLmdofcrt' },
  setarch: { leading: 1 },
  linux32: {},
  linux64: {},
  i386: {},
  x86_64: {},
  uname26: {},
  rlwrap: {
    short: 'abcCDeEfFgHlmoOpPqrsStw',
    long: ['file', 'history-filename', 'logfile', 'prompt-colour', 'substitute-prompt'],
  },
  runcon: { short: 'urtlc', long: ['user', 'role', 'type', 'range'] },
  cgexec: { short: 'g' },
  trickle: { short: 'duwtlLn' },
  tsocks: {},
  daemonize: { short: 'aceEoplu' },
  sshpass: { short: 'pfdP' },
  'xvfb-run': {
    short: 'nsfewp',
    long: ['server-num', 'server-args', 'auth-file', 'error-file', 'wait', 'xauth-protocol'],
  },
  'dbus-launch': {},
  chronic: {},
  openvt: { short: 'cCu' },
  entr: { short: '' },
  nq: { short: 'c' },
  run0: {
    long: [
      'user',
      'group',
      'unit',
      'property',
      'description',
      'slice',
      'slice-inherit',
      'setenv',
      'chdir',
      'nice',
      'background',
      'machine',
    ],
    short: 'ugDM',
  },
  'systemd-nspawn': {
    short: 'DiMuSbxaE',
    long: [
      'directory',
      'image',
      'machine',
      'user',
      'setenv',
      'bind',
      'bind-ro',
      'tmpfs',
      'overlay',
      'network-bridge',
      'slice',
      'property',
      'template',
      'chdir',
      'capability',
      'drop-capability',
    ],
  },
};

const shells = new Set([
  'sh',
  'bash',
  'rbash',
  'zsh',
  'dash',
  'ksh',
  'ksh93',
  'mksh',
  'ash',
  'yash',
  'posh',
  'fish',
  'tcsh',
  'csh',
]);

const stdinPaths = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

function shellHandler(inv: Invocation): void {
  const args = inv.args;
  let command = false;
  let readsStdin = false;
  /** Only options that do not make the shell read other files or change what runs (`-c`, `-e`, `-x`, `-o`). */
  let plain = true;
  let i = 1;
  for (; i < args.length; i++) {
    const arg = args[i] as Arg;
    if (arg.dynamic) {
      inv.opaque(`${inv.program}'s arguments are known only at run time`);
      return;
    }
    const value = arg.value;
    if (value === '--' || value === '-') {
      if (value === '-') readsStdin = true;
      i++;
      break;
    }
    if (/^--(rcfile|init-file)$/.test(value)) {
      plain = false;
      i++;
      continue;
    }
    if (value.startsWith('--')) {
      if (!/^--(noprofile|norc|posix|restricted)$/.test(value)) plain = false;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(value)) {
      if (!/^[-+][cexuvfo]+$/.test(value)) plain = false;
      if (value.startsWith('-') && value.includes('c')) command = true;
      if (value.startsWith('-') && value.includes('s')) readsStdin = true;
      if (/[oO]$/.test(value)) i++;
      continue;
    }
    break;
  }
  const operand = args[i];
  if (command) {
    inv.runShellWord(operand, `the ${inv.program} -c command`);
    if (operand && !operand.dynamic && plain) inv.transparent();
    return;
  }
  if (!operand || readsStdin || stdinPaths.has(operand.value)) {
    inv.programFromStdin('shell');
    if (operand && stdinPaths.has(operand.value) && !inv.stdin)
      inv.opaque(`${inv.program} reads a script from standard input`);
    return;
  }
  if (operand.dynamic) inv.opaque(`the script ${inv.program} runs is chosen at run time`);
}

interface InterpreterSpec {
  /** Short options whose value is program text. */
  code: string;
  /** Long options whose value is program text. */
  codeLong?: readonly string[];
  /** Short options that take the next word as a value. */
  value?: string;
  /** Short options that end option parsing without reading standard input (`python -m module`). */
  stop?: string;
  /** Subcommands that take program text (`deno eval`). */
  codeCommands?: readonly string[];
}

function interpreterHandler(spec: InterpreterSpec): Handler {
  return (inv) => {
    const args = inv.args;
    let operand: Arg | undefined;
    let stopped = false;
    for (let i = 1; i < args.length; i++) {
      const arg = args[i] as Arg;
      const value = arg.value;
      if (arg.dynamic && (arg.splittable || value === '' || value.startsWith('-'))) {
        inv.opaque(`${inv.program}'s arguments are known only at run time`);
        return;
      }
      if (value === '--') {
        operand = args[i + 1];
        break;
      }
      if (value.startsWith('--')) {
        const name = value.slice(2).split('=')[0] as string;
        if (spec.codeLong?.includes(name)) {
          inv.opaque(`${inv.program} runs program text given on the command line (--${name})`);
          return;
        }
        continue;
      }
      if (value.startsWith('-') && value.length > 1) {
        const letters = value.slice(1);
        if ([...letters].some((letter) => spec.code.includes(letter))) {
          inv.opaque(`${inv.program} runs program text given on the command line (${value})`);
          return;
        }
        if (spec.stop?.includes(letters[0] as string)) {
          stopped = true;
          break;
        }
        if (spec.value?.includes(letters.at(-1) as string) && letters.length === 1) i++;
        continue;
      }
      operand = arg;
      break;
    }
    if (stopped) return;
    if (operand && spec.codeCommands?.includes(operand.value)) {
      inv.opaque(`${inv.program} ${operand.value} runs program text given on the command line`);
      return;
    }
    if (!operand || stdinPaths.has(operand.value)) {
      inv.programFromStdin('interpreter');
      if (operand && !inv.stdin) inv.opaque(`${inv.program} reads its program from standard input`);
      return;
    }
    if (operand.dynamic) inv.opaque(`the script ${inv.program} runs is chosen at run time`);
  };
}

function awkHandler(inv: Invocation): void {
  // gawk: -W takes a value (`-W x 'BEGIN{…}'` has the program second); -o/-d/-p/-D/-L take one attached
  const parsed = inv.parse({
    short: 'FvfeilEW',
    optionalShort: 'odpDL',
    long: ['field-separator', 'assign', 'file', 'source', 'include', 'load', 'exec'],
  });
  if (parsed.unknown) return;
  if (hasOption(parsed, 'f', 'file', 'i', 'include', 'l', 'load', 'E', 'exec')) {
    inv.opaque(`${inv.program} runs a program from a file`);
    return;
  }
  for (const option of parsed.options) {
    if (/^(W|o|d|p|D|dump-variables|pretty-print|profile|debug)$/.test(option.name))
      inv.opaque(`${inv.program} -${option.name} writes files or changes how the program runs`);
  }
  const programs = parsed.options.filter((o) => o.name === 'e' || o.name === 'source').map((o) => o.value);
  if (programs.length === 0) programs.push(parsed.rest[0]);
  for (const program of programs) {
    if (!program) {
      inv.programFromStdin('interpreter');
      continue;
    }
    if (program.dynamic) inv.opaque(`the ${inv.program} program is known only at run time`);
    else if (awkProgramRunsOrWrites(program.value)) {
      inv.opaque(`the ${inv.program} program can run commands or write files`);
    }
  }
}

function sedHandler(inv: Invocation): void {
  const parsed = inv.parse({
    short: 'eflS',
    optionalShort: 'i',
    long: ['expression', 'file', 'line-length', 'separate'],
  });
  if (parsed.unknown) return;
  if (hasOption(parsed, 'f', 'file')) {
    inv.opaque('sed runs a script from a file');
    return;
  }
  if (hasOption(parsed, 'sandbox')) return;
  const scripts = parsed.options.filter((o) => o.name === 'e' || o.name === 'expression').map((o) => o.value);
  if (scripts.length === 0) scripts.push(parsed.rest[0]);
  for (const script of scripts) {
    if (!script) continue;
    if (script.dynamic) inv.opaque('the sed script is known only at run time');
    else if (sedScriptRunsCommands(script.value)) inv.opaque('the sed script runs commands or writes files (e, w)');
  }
}

const gitGlobalWithValue = new Set(['-C', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--list-cmds']);

/** git's own commands; anything else may be an alias, and aliases can run shell commands. */
const gitCommands = new Set(
  (
    'add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore check-mailmap ' +
    'check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit commit-graph ' +
    'commit-tree config count-objects credential describe diff diff-files diff-index diff-tree difftool fetch ' +
    'fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck gc get-tar-commit-id grep ' +
    'gui hash-object help init instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit ' +
    'maintenance merge merge-base merge-file merge-tree mergetool mktag mktree mv name-rev notes pack-objects ' +
    'prune pull push range-diff read-tree rebase reflog remote repack replace request-pull rerere reset restore ' +
    'rev-list rev-parse revert rm send-email shortlog show show-branch show-ref sparse-checkout stash status ' +
    'stripspace submodule switch symbolic-ref tag update-index update-ref var verify-commit verify-pack ' +
    'verify-tag version whatchanged worktree write-tree lfs'
  ).split(' '),
);

const gitConfigKeyRuns =
  /^(alias\..*|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy)|.*\.(command|cmd|helper|textconv|driver|program|clean|smudge|process|tool|path)|sequence\.editor|.*editor|.*pager\..*|pager\..*|uploadpack\..*|protocol\..*)$/i;

function gitHandler(inv: Invocation): void {
  const args = inv.args;
  let i = 1;
  for (; i < args.length; i++) {
    const arg = args[i] as Arg;
    const value = arg.value;
    if (arg.dynamic) {
      inv.opaque('git arguments known only at run time');
      return;
    }
    if (value === '-c' || value.startsWith('--config-env') || value.startsWith('--exec-path=')) {
      inv.opaque('configuration on the git command line can make git run other programs');
      return;
    }
    if (gitGlobalWithValue.has(value)) {
      i++;
      continue;
    }
    if (value.startsWith('-')) continue;
    break;
  }
  const sub = args[i];
  if (!sub) return;
  if (!gitCommands.has(sub.value)) {
    inv.opaque(`git ${sub.value} is not a git command, so it may be an alias, which can run any command`);
    return;
  }
  const rest = args.slice(i + 1);
  const values = rest.map((arg) => arg.value);
  const has = (test: (value: string) => boolean) => values.some(test);
  const runsPrograms =
    has((v) => /^--(upload-pack|receive-pack|exec|extcmd|ext-diff|open-files-in-pager)(=|$)/.test(v)) ||
    (['clone', 'fetch', 'pull', 'ls-remote'].includes(sub.value) && has((v) => v === '-u')) ||
    (['rebase', 'difftool'].includes(sub.value) && has((v) => /^-[a-zA-Z]*x/.test(v))) ||
    (sub.value === 'grep' && has((v) => /^-O/.test(v))) ||
    (sub.value === 'submodule' && values.includes('foreach')) ||
    sub.value === 'filter-branch' ||
    (sub.value === 'config' && has((v) => gitConfigKeyRuns.test(v)));
  if (runsPrograms) inv.opaque(`these git ${sub.value} options make git run other programs`);
  if (sub.value === 'bisect' && values[0] === 'run') inv.runInner(rest.slice(1), undefined);
}

function findHandler(inv: Invocation): void {
  const args = inv.args;
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as Arg;
    if (arg.splittable && arg.dynamic) {
      inv.opaque('the find expression is known only at run time');
      return;
    }
    const value = arg.value;
    if (value === '-exec' || value === '-execdir' || value === '-ok' || value === '-okdir') {
      let end = i + 1;
      while (end < args.length && !((args[end]?.value === ';' || args[end]?.value === '+') && !args[end]?.dynamic))
        end++;
      inv.runInner(args.slice(i + 1, end).map(placeholderToUnknown), undefined);
      i = end;
    } else if (/^-(delete|fprint|fprint0|fprintf|fls)$/.test(value)) {
      inv.opaque(`find ${value} deletes or writes files`);
    }
  }
}

function placeholderToUnknown(arg: Arg): Arg {
  if (!arg.value.includes('{}')) return arg;
  return { ...unknownArg(arg.display, false), value: arg.value.replaceAll('{}', '') };
}

function xargsHandler(inv: Invocation): void {
  const parsed = inv.parse({
    short: 'adEILnPs',
    optionalShort: 'eil',
    long: [
      'arg-file',
      'delimiter',
      'eof',
      'replace',
      'max-lines',
      'max-args',
      'max-procs',
      'max-chars',
      'process-slot-var',
    ],
  });
  if (parsed.unknown) return;
  const replace = parsed.options.find((o) => o.name === 'I' || o.name === 'i' || o.name === 'replace');
  const inner = parsed.rest.length > 0 ? parsed.rest : [literalArg('echo')];
  if (inner[0] && !inner[0].dynamic && !inner[0].glob) inv.transparent();
  // `yes | xargs -P0 …`: no limit on how many processes run at once
  const procs = optionValue(parsed, 'P', 'max-procs');
  if (procs && (procs.dynamic || /^0+$/.test(procs.value))) inv.opaque('xargs -P0 starts processes without limit');
  if (replace) {
    const marker = replace.value?.value || '{}';
    // `echo / | xargs -I{} rm -rf {}`: each input line the producer prints is evidence
    const text = inv.stdin?.known ? inv.stdin.text : inv.stdin?.evidence?.();
    const inputs = text?.split('\n').filter((line) => line.trim() !== '') ?? [];
    if (inputs.length > 0 && inputs.length <= 16) {
      for (const input of inputs) {
        const filled = inner.map((arg) =>
          arg.value.includes(marker) ? literalArg(arg.value.replaceAll(marker, input.trim())) : arg,
        );
        inv.runInner(filled, undefined);
      }
    }
    inv.runInner(
      inner.map((arg) =>
        arg.value.includes(marker)
          ? { ...unknownArg(arg.display, false), value: arg.value.replaceAll(marker, '') }
          : arg,
      ),
      undefined,
    );
  } else {
    inv.runInner([...inner, unknownArg('<arguments read by xargs>', true)], undefined);
    // `echo / | xargs rm -rf`: what the input says is evidence
    const text = inv.stdin?.known ? inv.stdin.text : inv.stdin?.evidence?.();
    const words = text?.split(/\s+/).filter(Boolean) ?? [];
    if (words.length > 0 && words.length <= 64) inv.runInner([...inner, ...words.map(literalArg)], undefined);
  }
}

function envHandler(inv: Invocation): void {
  const parsed = inv.parse({
    short: 'uCS',
    long: ['unset', 'chdir', 'split-string'],
    assignments: true,
    dashAlone: true,
  });
  if (parsed.unknown) return;
  const split = optionValue(parsed, 'S', 'split-string');
  if (split) {
    if (split.dynamic || parsed.rest.some((arg) => arg.dynamic)) {
      inv.opaque('env -S splits a string known only at run time');
      return;
    }
    inv.runShellText([split.value, ...parsed.rest.map((arg) => shellQuote(arg.value))].join(' '));
    inv.transparent();
    return;
  }
  inv.runInner(parsed.rest);
  if (parsed.rest.length > 0) inv.transparent();
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function watchHandler(inv: Invocation): void {
  const parsed = inv.parse({ short: 'nq', long: ['interval', 'equexit'] });
  if (parsed.unknown) return;
  if (hasOption(parsed, 'x', 'exec')) inv.runInner(parsed.rest);
  else inv.runJoinedWords(parsed.rest, 'the command watch runs');
}

function suHandler(inv: Invocation): void {
  const parsed = inv.parse({
    short: 'cgGswu',
    long: ['command', 'session-command', 'group', 'supp-group', 'shell', 'whitelist-environment', 'user'],
    dashAlone: true,
  });
  if (parsed.unknown) return;
  const user = optionValue(parsed, 'u', 'user');
  if (inv.program === 'runuser' && user) {
    inv.runInner(parsed.rest[0]?.value === '--' ? parsed.rest.slice(1) : parsed.rest);
    return;
  }
  // su permutes its arguments: `su - root -c CMD` has the command after the user
  const late = parsed.rest.findIndex((arg) => /^(-c|--command|--session-command)$/.test(arg.value));
  const lateEq = parsed.rest.find((arg) => /^--(session-)?command=/.test(arg.value));
  const command =
    optionValue(parsed, 'c', 'command', 'session-command') ??
    (late >= 0 ? parsed.rest[late + 1] : undefined) ??
    (lateEq ? { ...lateEq, value: lateEq.value.slice(lateEq.value.indexOf('=') + 1) } : undefined);
  if (command) inv.runShellWord(command, `the ${inv.program} -c command`);
  else if (parsed.rest.length > 1) inv.opaque(`arguments passed to the login shell by ${inv.program}`);
}

function evalHandler(inv: Invocation): void {
  const words = inv.args.slice(1);
  if (words.some((word) => word.dynamic)) inv.opaque('eval of text known only at run time');
  else {
    inv.runJoinedWords(words, 'eval');
    if (words.length > 0) inv.transparent();
  }
}

function trapHandler(inv: Invocation): void {
  const rest = inv.args.slice(1).filter((arg) => arg.value !== '--');
  const action = rest[0];
  if (!action || /^-[lp]$/.test(action.value) || action.value === '-' || rest.length < 2) return;
  inv.runShellWord(action, 'the trap action');
}

function sourceHandler(inv: Invocation): void {
  const operand = inv.args.slice(1).find((arg) => arg.value !== '--');
  if (!operand) return;
  if (operand.dynamic) inv.opaque(`the script ${inv.program} reads is chosen at run time`);
  else if (stdinPaths.has(operand.value)) {
    if (inv.stdin?.known) inv.runShellText(inv.stdin.text);
    else inv.opaque(`${inv.program} runs a script from standard input`);
  }
}

function powershellHandler(inv: Invocation): void {
  const args = inv.args;
  const valued = ['executionpolicy', 'ep', 'windowstyle', 'inputformat', 'outputformat', 'workingdirectory', 'wd'];
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as Arg;
    if (arg.dynamic) {
      inv.opaque(`${inv.program}'s arguments are known only at run time`);
      return;
    }
    const match = /^(?:--?|\/)([A-Za-z]+)(?::(.*))?$/.exec(arg.value);
    if (!match) {
      inv.opaque(`${inv.program} runs PowerShell code given on the command line`);
      inv.runJoinedWords(args.slice(i), 'the PowerShell command');
      return;
    }
    const name = (match[1] as string).toLowerCase();
    if (name === 'e' || name === 'ec' || (name.length >= 2 && 'encodedcommand'.startsWith(name))) {
      const encoded = args[i + 1];
      inv.opaque(`${inv.program} runs encoded PowerShell code`);
      if (!encoded || encoded.dynamic) return;
      const decoded = decodeBase64Text(encoded.value, 'utf-16le');
      if (decoded === undefined) inv.acc.parseProblem('the encoded PowerShell command is not valid base64');
      else inv.runShellText(decoded);
      return;
    }
    if (name === 'c' || (name.length >= 3 && 'command'.startsWith(name))) {
      inv.opaque(`${inv.program} runs PowerShell code given on the command line`);
      const rest = args.slice(i + 1);
      if (rest.length === 1 && rest[0]?.value === '-') inv.programFromStdin('interpreter');
      else inv.runJoinedWords(rest, 'the PowerShell command');
      return;
    }
    if (name === 'f' || (name.length >= 2 && 'file'.startsWith(name))) {
      if (args[i + 1]?.value === '-') inv.programFromStdin('interpreter');
      return;
    }
    if (valued.some((option) => option.startsWith(name) && name.length >= 2) && match[2] === undefined) i++;
  }
  inv.programFromStdin('interpreter');
}

function cmdHandler(inv: Invocation): void {
  const index = inv.args.findIndex((arg, i) => i > 0 && /^\/[ck]$/i.test(arg.value));
  if (index > 0) inv.runJoinedWords(inv.args.slice(index + 1), 'the cmd /c command');
  else inv.programFromStdin('shell');
}

function sshHandler(inv: Invocation): void {
  const parsed = inv.parse({ short: 'BbcDEeFIiJLlmOoPpQRSWw' });
  if (parsed.unknown) return;
  for (const option of parsed.options) {
    if (option.name === 'F') inv.opaque(`${inv.program} -F reads a configuration that can run commands`);
    if (option.name === 'S' && inv.program !== 'ssh') inv.opaque(`${inv.program} -S runs another program`);
    if (
      option.name === 'o' &&
      (!option.value ||
        option.value.dynamic ||
        /^\s*(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand|Match)/i.test(option.value.value))
    ) {
      inv.opaque(`${inv.program} -o ${option.value?.display ?? ''} runs a local command`);
    }
  }
  if (inv.program !== 'ssh') return;
  const remote = parsed.rest.slice(1);
  if (remote.length > 0) inv.runJoinedWords(remote, 'the remote command');
  else if (parsed.rest.length === 1 && inv.stdin) inv.programFromStdin('interpreter');
}

/** Options of ordinary tools that make them run another program or code. */
const runningOptions: Array<[RegExp, RegExp, string]> = [
  [/^rg$/, /^--(pre|hostname-bin)(=|$)/, 'rg runs a preprocessor command'],
  [
    /^(g?tar|bsdtar)$/,
    /^(--(checkpoint-action|to-command|use-compress-program|info-script|new-volume-script|rsh-command|rmt-command)(=|$)|-[A-Za-z]*[IF])/,
    'tar runs another program',
  ],
  [/^rsync$/, /^(--(rsh|rsync-path)(=|$)|-[A-Za-z]*e)/, 'rsync runs a remote shell command'],
  [/^sort$/, /^--compress-program(=|$)/, 'sort runs a compression program'],
  [/^zip$/, /^(-TT|--unzip-command)/, 'zip runs a test command'],
  [/^tcpdump$/, /^-[A-Za-z]*z/, 'tcpdump runs a command on each file'],
  [/^man$/, /^(-[A-Za-z]*[PH]|--(pager|html))/, 'man runs a pager or browser of your choice'],
  [
    /^(n?vim?|ex|view|vimdiff|gvim|rvim)$/,
    /^(-c|--cmd|-S|-s|\+.+)$/,
    'the editor runs commands given on its command line',
  ],
  [/^emacs$/, /^(--eval|-l|--load|-f|--funcall|-x|--script)(=|$)/, 'emacs evaluates code given on its command line'],
  [
    /^gdb$/,
    /^(-ex|-iex|-x|-ix|--eval-command|--command|--init-command|--init-eval-command)(=|$)/,
    'gdb runs commands given on its command line',
  ],
  [/^(apt|apt-get|aptitude)$/, /^(-o|--option)(=|$)/, 'apt options can set hooks that run commands'],
  [/^(mapfile|readarray)$/, /^-[A-Za-z]*C/, 'mapfile -C runs a callback'],
  [/^hash$/, /^-[A-Za-z]*p/, 'hash -p changes which program a name runs'],
  [/^enable$/, /^-[A-Za-z]*f/, 'enable -f loads code into the shell'],
  [/^shopt$/, /^expand_aliases$/, 'aliases would change what names run'],
  [/^alias$/, /=/, 'an alias changes what a name runs'],
];

/** runningOptions entries per program name, remembered (a bounded cache: names come from untrusted text). */
const runningOptionsByProgram = new Map<string, Array<[RegExp, RegExp, string]>>();

function runningOptionsFor(program: string): Array<[RegExp, RegExp, string]> {
  let entries = runningOptionsByProgram.get(program);
  if (!entries) {
    entries = runningOptions.filter(([pattern]) => pattern.test(program));
    if (runningOptionsByProgram.size > 4096) runningOptionsByProgram.clear();
    runningOptionsByProgram.set(program, entries);
  }
  return entries;
}

function tableOpaque(inv: Invocation): boolean {
  if (inv.args.length < 2) return false;
  for (const [, option, message] of runningOptionsFor(inv.program)) {
    if (inv.args.some((arg, i) => i > 0 && option.test(arg.value))) {
      inv.opaque(message);
      return true;
    }
  }
  return false;
}

/** Builtins that evaluate array subscripts in their arguments, where `$(…)` runs even if it was quoted. */
const arithmeticBuiltins = new Set([
  'let',
  'test',
  '[',
  'read',
  'printf',
  'mapfile',
  'readarray',
  'unset',
  'declare',
  'typeset',
  'local',
  'export',
  'readonly',
  'wait',
  'getopts',
  'printf',
]);

function checkArithmeticArguments(inv: Invocation): void {
  if (tableOpaque(inv)) return;
  if (!arithmeticBuiltins.has(inv.program)) return;
  const pattern = inv.program === 'let' ? /\$\(|`/ : /\[[^\]]*(\$\(|`)/;
  if (inv.args.some((arg, i) => i > 0 && pattern.test(arg.value))) {
    inv.opaque('quoted text reaches arithmetic evaluation, which runs $(…) in it');
  }
}

const handlers: Record<string, Handler> = {
  eval: evalHandler,
  trap: trapHandler,
  source: sourceHandler,
  '.': sourceHandler,
  env: envHandler,
  xargs: xargsHandler,
  find: findHandler,
  watch: watchHandler,
  su: suHandler,
  runuser: suHandler,
  git: gitHandler,
  awk: awkHandler,
  gawk: awkHandler,
  mawk: awkHandler,
  nawk: awkHandler,
  sed: sedHandler,
  gsed: sedHandler,
  ssh: sshHandler,
  scp: sshHandler,
  sftp: sshHandler,
  powershell: powershellHandler,
  pwsh: powershellHandler,
  cmd: cmdHandler,
  busybox: (inv) => {
    const applet = inv.args[1];
    if (applet && !applet.value.startsWith('-')) inv.runInner(inv.args.slice(1));
  },
  flock: (inv) => {
    const parsed = inv.parse({ short: 'wEc', long: ['timeout', 'conflict-exit-code', 'command'], leading: 1 });
    const command = optionValue(parsed, 'c', 'command');
    if (command) inv.runShellWord(command, 'the flock -c command');
    else if (!parsed.unknown) inv.runInner(parsed.rest);
  },
  script: (inv) => {
    const parsed = inv.parse({
      short: 'cEIOTBm',
      long: ['command', 'echo', 'log-in', 'log-out', 'log-timing', 'log-io', 'logging-format'],
    });
    inv.runShellWord(optionValue(parsed, 'c', 'command'), 'the script -c command');
  },
  sg: (inv) => {
    const rest = inv.args.slice(1).filter((arg) => arg.value !== '-');
    const command = rest[1]?.value === '-c' ? rest.slice(2) : rest.slice(1);
    inv.runJoinedWords(command, 'the sg command');
  },
  ip: (inv) => {
    const index = inv.args.findIndex(
      (arg, i) => arg.value === 'exec' && ['netns', 'vrf'].includes(inv.args[i - 1]?.value ?? ''),
    );
    if (index > 0) inv.runInner(inv.args.slice(index + 2));
  },
  at: atHandler,
  batch: atHandler,
  crontab: (inv) => {
    const parsed = inv.parse({ short: 'u' });
    if (parsed.rest.length > 0) inv.opaque('crontab installs commands that are not shown');
  },
  parallel: parallelHandler,
  sem: parallelHandler,
  coproc: (inv) => {
    inv.opaque('coproc runs a command the grammar cannot follow');
    inv.runInner(inv.args.slice(1));
  },
  bwrap: bwrapHandler,
  gdb: gdbHandler,
  perf: perfHandler,
  'start-stop-daemon': startStopDaemonHandler,
  tmux: tmuxHandler,
  screen: screenHandler,
  capsh: capshHandler,
  machinectl: machinectlHandler,
  docker: containerExecHandler,
  podman: containerExecHandler,
  nerdctl: containerExecHandler,
  kubectl: containerExecHandler,
  'lxc-attach': containerExecHandler,
  exe: (inv) => {
    if (/^\/proc\/(self|thread-self|\d+)\/exe$/.test(inv.args[0]?.value ?? '')) selfExeHandler(inv);
  },
  python: interpreterHandler({ code: 'c', value: 'WXQ', stop: 'm' }),
  node: interpreterHandler({ code: 'ep', codeLong: ['eval', 'print'], value: 'rC' }),
  nodejs: interpreterHandler({ code: 'ep', codeLong: ['eval', 'print'], value: 'rC' }),
  bun: interpreterHandler({ code: 'e', codeLong: ['eval', 'print'], codeCommands: ['x'] }),
  deno: interpreterHandler({ code: 'e', codeLong: ['eval'], codeCommands: ['eval', 'repl'] }),
  php: interpreterHandler({ code: 'rBRE', value: 'cdfz' }),
  rscript: interpreterHandler({ code: 'e' }),
  r: interpreterHandler({ code: 'e' }),
  osascript: interpreterHandler({ code: 'e' }),
  expect: interpreterHandler({ code: 'c' }),
  dc: interpreterHandler({ code: 'e', codeLong: ['expression'] }),
  irb: interpreterHandler({ code: 'e' }),
};

function atHandler(inv: Invocation): void {
  if (inv.args.some((arg) => /^-[A-Za-z]*f/.test(arg.value)) || inv.stdin) {
    inv.opaque(`${inv.program} schedules commands that are not shown`);
  }
}

/** `bwrap --bind SRC DST … CMD`: options take 0, 1 or 2 words; the first other word starts the command. */
const bwrapArity: Record<string, number> = Object.fromEntries([
  ...'bind bind-try dev-bind dev-bind-try ro-bind ro-bind-try symlink setenv file bind-data ro-bind-data chmod'
    .split(' ')
    .map((name) => [name, 2]),
  ...(
    'dev proc tmpfs mqueue dir chdir unsetenv lock-file sync-fd info-fd json-status-fd block-fd userns-block-fd ' +
    'uid gid hostname remount-ro exec-label file-label cap-add cap-drop perms size args seccomp add-seccomp-fd ' +
    'userns userns2 pidns argv0 overlay-src tmp-overlay ro-overlay overlay'
  )
    .split(' ')
    .map((name) => [name, 1]),
]);

function bwrapHandler(inv: Invocation): void {
  const args = inv.args;
  let i = 1;
  while (i < args.length) {
    const arg = args[i] as Arg;
    if (arg.dynamic) {
      inv.opaque(`${inv.program}'s arguments are known only at run time`);
      return;
    }
    if (arg.value === '--') {
      i++;
      break;
    }
    if (!arg.value.startsWith('--')) break;
    i += 1 + (bwrapArity[arg.value.slice(2)] ?? 0);
  }
  inv.runInner(args.slice(i));
}

/** `ld-linux-x86-64.so.2 [--library-path X …] PROGRAM ARGS`: the dynamic loader runs the program it is given. */
function loaderHandler(inv: Invocation): void {
  const parsed = inv.parse({
    long: ['library-path', 'preload', 'audit', 'argv0', 'inhibit-rpath', 'glibc-hwcaps-prepend', 'glibc-hwcaps-mask'],
  });
  if (parsed.unknown) return;
  if (hasOption(parsed, 'list', 'verify', 'help', 'version', 'list-tunables', 'list-diagnostics')) return;
  if (hasOption(parsed, 'preload', 'audit', 'library-path'))
    inv.opaque(`${inv.program} loads libraries chosen on its command line`);
  inv.runInner(parsed.rest);
}

/** `/proc/self/exe`, `/proc/PID/exe`, `/dev/fd/N`: a program known only at run time (for a shell, the shell itself). */
function selfExeHandler(inv: Invocation): void {
  inv.opaque(`${inv.args[0]?.display} runs whatever program that process is (a shell, here)`);
  shellHandler(inv);
}

function gdbHandler(inv: Invocation): void {
  const index = inv.args.findIndex((arg, i) => i > 0 && arg.value === '--args');
  if (index > 0) inv.runInner(inv.args.slice(index + 1));
}

const perfRunning = new Set([
  'record',
  'stat',
  'trace',
  'top',
  'mem',
  'c2c',
  'kvm',
  'sched',
  'lock',
  'kwork',
  'ftrace',
  'timechart',
  'script',
]);

function perfHandler(inv: Invocation): void {
  const args = inv.args;
  let i = 1;
  while (i < args.length && args[i]?.value.startsWith('-')) i++;
  const sub = args[i];
  if (!sub) return;
  if (sub.dynamic) {
    inv.opaque('the perf subcommand is known only at run time');
    return;
  }
  if (!perfRunning.has(sub.value)) return;
  // perf options: values attached or as the next word; the first word that is not one starts the command
  const valued = /^-(o|e|p|t|u|C|F|c|r|x|G|m|I|j|D|b|z|a|g|k|T)$/;
  const withValue = /^-[oeptuCFcrxGmIjDz]$/;
  i++;
  while (i < args.length) {
    const value = args[i]?.value ?? '';
    if (args[i]?.dynamic) {
      inv.opaque('perf arguments known only at run time');
      return;
    }
    if (value === '--') {
      i++;
      break;
    }
    if (!value.startsWith('-')) break;
    i += withValue.test(value) || (/^--[a-z-]+$/.test(value) && perfLongValued.has(value.slice(2))) ? 2 : 1;
    void valued;
  }
  inv.runInner(args.slice(i));
}

const perfLongValued = new Set([
  'output',
  'event',
  'pid',
  'tid',
  'uid',
  'cpu',
  'freq',
  'count',
  'repeat',
  'field-separator',
  'cgroup',
  'mmap-pages',
  'call-graph',
  'delay',
  'control',
]);

function startStopDaemonHandler(inv: Invocation): void {
  const args = inv.args;
  let program: Arg | undefined;
  let dashes = args.length;
  for (let i = 1; i < args.length; i++) {
    const value = args[i]?.value ?? '';
    if (value === '--') {
      dashes = i;
      break;
    }
    const long = /^--(exec|startas)(=(.*))?$/.exec(value);
    if (long) program = long[3] !== undefined ? { ...(args[i] as Arg), value: long[3] } : args[++i];
    else if (value === '-x' || value === '-a') program = args[++i];
  }
  if (!program) return;
  if (program.dynamic) {
    inv.opaque('the program start-stop-daemon runs is known only at run time');
    return;
  }
  inv.runInner([program, ...args.slice(dashes + 1)]);
}

const tmuxRunning = new Set([
  'new-session',
  'new',
  'new-window',
  'neww',
  'split-window',
  'splitw',
  'respawn-pane',
  'respawnp',
  'respawn-window',
  'respawnw',
  'run-shell',
  'run',
  'if-shell',
  'if',
  'pipe-pane',
  'pipep',
  'display-popup',
  'popup',
]);
const tmuxTyping = new Set([
  'send-keys',
  'send',
  'send-prefix',
  'paste-buffer',
  'pasteb',
  'set-buffer',
  'setb',
  'load-buffer',
  'loadb',
  'source-file',
  'source',
  'set-hook',
  'bind-key',
  'bind',
]);

/** tmux runs a shell command given to new-session/new-window/split-window/run-shell; send-keys types into a shell. */
function tmuxHandler(inv: Invocation): void {
  const args = inv.args;
  let i = 1;
  for (; i < args.length; i++) {
    const value = args[i]?.value ?? '';
    if (args[i]?.dynamic) {
      inv.opaque('tmux arguments known only at run time');
      return;
    }
    if (value === '-c') {
      inv.runShellWord(args[i + 1], 'the tmux -c command');
      return;
    }
    if (/^-[LSfT]$/.test(value)) i++;
    else if (!value.startsWith('-')) break;
  }
  // commands may be chained with `;` words (`tmux new -d \; send-keys …`)
  while (i < args.length) {
    const sub = args[i] as Arg;
    let end = args.findIndex((arg, k) => k > i && (arg.value === ';' || arg.value === '\\;'));
    if (end < 0) end = args.length;
    if (tmuxTyping.has(sub.value)) inv.opaque(`tmux ${sub.value} types or loads commands into a shell`);
    else if (tmuxRunning.has(sub.value)) {
      let k = i + 1;
      while (k < end && (args[k]?.value ?? '').startsWith('-')) {
        k +=
          /^-[cesntxyFlLfSbdwhk]*[cesntxyFlLfSbwhk]$/.test(args[k]?.value ?? '') &&
          /[cestnxyFlSfwhkb]$/.test(args[k]?.value ?? '')
            ? 2
            : 1;
      }
      const words = args.slice(k, end);
      if (words.length > 0) {
        inv.opaque(`tmux ${sub.value} runs a command in the background`);
        inv.runJoinedWords(words, `the tmux ${sub.value} command`);
      }
    } else if (
      !/^(ls|list-sessions|list-windows|lsw|list-panes|lsp|has-session|has|kill-server|kill-session|attach|attach-session|a|detach|capture-pane|capturep|display-message|display|info|show-options|show|show-buffer|showb)$/.test(
        sub.value,
      )
    ) {
      inv.opaque(`tmux ${sub.value} is not known to the rules`);
    }
    i = end + 1;
  }
}

/** `screen -dmS name CMD ARGS`: the first word that is not an option starts the command; `-X` sends commands. */
function screenHandler(inv: Invocation): void {
  const args = inv.args;
  let i = 1;
  for (; i < args.length; i++) {
    const value = args[i]?.value ?? '';
    if (args[i]?.dynamic) {
      inv.opaque('screen arguments known only at run time');
      return;
    }
    if (/^-[A-Za-z]*X$/.test(value) || value === '-X') {
      inv.opaque('screen -X sends commands to a session');
      return;
    }
    if (/^-(S|c|e|h|p|T|Logfile|s|t)$/.test(value)) i++;
    else if (!value.startsWith('-')) break;
  }
  const inner = args.slice(i);
  if (inner.length > 0) {
    inv.opaque('screen runs a command in a detached session');
    inv.runInner(inner);
  }
}

function capshHandler(inv: Invocation): void {
  const args = inv.args;
  const index = args.findIndex((arg, i) => i > 0 && arg.value === '--');
  const shell = args.find((arg) => arg.value.startsWith('--shell='));
  if (shell) inv.opaque('capsh --shell= chooses the program it runs');
  if (args.some((arg) => arg.dynamic)) {
    inv.opaque('capsh arguments known only at run time');
    return;
  }
  const shellName = shell ? shell.value.slice('--shell='.length) : 'bash';
  if (index > 0) inv.runInner([literalArg(shellName), ...args.slice(index + 1)]);
  const exec = args.find((arg) => arg.value.startsWith('==') || arg.value === '==');
  if (exec) inv.opaque('capsh == runs itself again with other arguments');
}

function machinectlHandler(inv: Invocation): void {
  const args = inv.args;
  const index = args.findIndex((arg) => arg.value === 'shell' || arg.value === 'login');
  if (index < 0) return;
  let i = index + 1;
  while (i < args.length && (args[i]?.value ?? '').startsWith('-'))
    i += /^(--uid|--setenv|-E)$/.test(args[i]?.value ?? '') ? 2 : 1;
  const inner = args.slice(i + 1);
  inv.opaque('machinectl shell runs commands in another machine');
  if (inner.length > 0) inv.runInner(inner);
}

/** `docker exec C CMD`, `kubectl exec P -- CMD`, `lxc-attach -n C -- CMD`: the command runs elsewhere, but it runs. */
function containerExecHandler(inv: Invocation): void {
  const args = inv.args;
  const execIndex = args.findIndex((arg, i) => i > 0 && (arg.value === 'exec' || arg.value === 'run'));
  const dashes = args.findIndex((arg, i) => i > 0 && arg.value === '--');
  if (inv.program === 'lxc-attach' || inv.program === 'kubectl') {
    if (dashes > 0 && (inv.program === 'lxc-attach' || execIndex > 0)) inv.runInner(args.slice(dashes + 1));
    return;
  }
  if (execIndex < 0 || args[execIndex]?.value !== 'exec') return;
  // docker exec [OPTIONS] CONTAINER CMD ARGS
  let i = execIndex + 1;
  while (i < args.length && (args[i]?.value ?? '').startsWith('-')) {
    i += /^-(e|u|w)$|^--(env|env-file|user|workdir|detach-keys)$/.test(args[i]?.value ?? '') ? 2 : 1;
  }
  inv.runInner(args.slice(i + 1));
}

/** `parallel CMD ::: ARGS`: opaque; the command with its arguments is evidence for the catastrophic layer. */
function parallelHandler(inv: Invocation): void {
  inv.opaque('GNU parallel builds commands from its input');
  const args = inv.args;
  let i = 1;
  while (i < args.length && (args[i]?.value ?? '').startsWith('-')) {
    i +=
      /^-(j|P|S|N|n|L|l|d|a|I|E|X|s|C|M)$|^--(jobs|max-procs|sshlogin|arg-file|delimiter|colsep|results|joblog|tmpdir|timeout)$/.test(
        args[i]?.value ?? '',
      )
        ? 2
        : 1;
  }
  const sep = args.findIndex((arg, k) => k >= i && /^:::+\+?$/.test(arg.value));
  const command = args.slice(i, sep < 0 ? args.length : sep);
  const values = sep < 0 ? [] : args.slice(sep + 1).filter((arg) => !/^:::+\+?$/.test(arg.value));
  if (command.length === 0) return;
  if (command.length === 1 && /\s/.test(command[0]?.value ?? '')) {
    inv.runShellWord(command[0], 'the parallel command');
    for (const value of values.slice(0, 16)) inv.runShellText(`${command[0]?.value} ${shellQuote(value.value)}`);
    return;
  }
  const marked = command.some((arg) => arg.value.includes('{}'));
  if (values.length === 0)
    inv.runInner([
      ...command.map(placeholderToUnknown),
      ...(marked ? [] : [unknownArg('<arguments read by parallel>', true)]),
    ]);
  for (const value of values.slice(0, 16)) {
    inv.runInner(
      marked ? command.map((arg) => ({ ...arg, value: arg.value.replaceAll('{}', value.value) })) : [...command, value],
    );
  }
}

/**
 * A program the rules know nothing about may be a wrapper (`mywrap rm -rf /`): when one of its words names a
 * program that matters, the words from there are judged as a command too, and the wrapper is at least approve.
 */
const commandsThatMatter =
  /^(rm|rmdir|dd|shred|mkfs(\..+)?|mke2fs|mkswap|mkntfs|mkdosfs|wipefs|blkdiscard|fdisk|sfdisk|cfdisk|parted|sgdisk|gdisk|chmod|chown|chgrp|chattr|setfacl|mv|cp|find|rsync|tar|zip|truncate|cryptsetup|nvme|hdparm|lvremove|vgremove|pvremove|zpool|zfs|sg_format|sg_sanitize|mdadm|reboot|shutdown|poweroff|halt|init|telinit|systemctl|kill|killall|pkill|sh|bash|dash|zsh|ksh|mksh|ash|busybox|env|sudo|doas|su|python[0-9.]*|perl|ruby|node|php|tee|curl|wget|crontab|iptables|nft|ufw|setenforce|git)$/;

/** Programs that are known not to run their arguments as a command (everything with a handler is known too). */
const plainPrograms = new Set(
  (
    'echo printf cat ls head tail grep egrep fgrep rg sed awk gawk mawk sort uniq cut tr wc man info apropos whatis ' +
    'which whereis type command hash help less more most file stat touch mkdir ln install cp mv rm rmdir chmod chown ' +
    'chgrp tee dd diff cmp comm git docker kubectl helm npm npx yarn pnpm pip pip3 apt apt-get apt-cache dnf yum ' +
    'zypper pacman apk brew snap flatpak dpkg rpm make cmake go cargo rustc gcc cc g++ clang javac java mvn gradle ' +
    'systemctl service journalctl kill pkill killall pgrep ps top htop id whoami ssh scp sftp rsync curl wget tar zip ' +
    'unzip gzip gunzip zcat bzip2 xz zstd base64 xxd od hexdump strings jq yq column paste join fold fmt nl tac rev ' +
    'basename dirname realpath readlink du df find locate mount umount lsblk blkid ip ss netstat ping dig host ' +
    'nslookup traceroute openssl date cal uname hostname uptime free vmstat iostat crontab at useradd usermod ' +
    'userdel groupadd passwd chpasswd visudo sudoedit vi vim nvim nano emacs ed ex code tmux screen test [ true ' +
    'false : sleep seq expr bc dc yes shuf split csplit iconv envsubst getent id groups last who w read mapfile ' +
    'readarray printenv export declare typeset local unset set shopt alias unalias cd pushd popd dirs pwd exit ' +
    'return break continue shift wait jobs fg bg disown kill ulimit umask times history fc complete compgen ' +
    'fdisk sfdisk cfdisk parted sgdisk gdisk cryptsetup nvme hdparm lvremove vgremove pvremove zpool zfs mdadm'
  ).split(' '),
);

export function unknownWrapper(args: readonly Arg[], acc: Analysis, depth: number, program: string): void {
  if (/^\/(dev\/fd|proc\/[^/]+\/fd)\//.test(args[0]?.value ?? '')) {
    acc.opaque(args, `${args[0]?.display} runs whatever that file descriptor holds`);
    return;
  }
  if (plainPrograms.has(program) || handlers[program] || familyHandlers.some(([family]) => family.test(program))) {
    return;
  }
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as Arg;
    if (arg.dynamic || arg.glob || arg.value.startsWith('-')) continue;
    // `mywrap 'rm -rf /'`: a word that reads as a command line is judged as shell text
    const first = /\s/.test(arg.value) ? (arg.value.trim().split(/\s+/)[0] ?? '') : '';
    if (first && commandsThatMatter.test(evidenceName(first))) {
      acc.opaque(args, `${program} is not known to the rules and may run ${arg.display} as a command`);
      analyzeShellText(arg.value, acc, depth + 1);
      return;
    }
    if (!commandsThatMatter.test(evidenceName(arg.value)) || /\s/.test(arg.value)) continue;
    acc.opaque(args, `${program} is not known to the rules and may run ${arg.display} as a command`);
    analyzeInvocation(args.slice(i), acc, depth + 1, undefined);
    return;
  }
}

const familyHandlers: Array<[RegExp, Handler]> = [
  [/^(ld-linux.*\.so.*|ld\.so.*|ld-musl-.*\.so.*|ld64\.so.*)$/, loaderHandler],
  [/^(python|pypy)[0-9.]*$/, interpreterHandler({ code: 'c', value: 'WXQ', stop: 'm' })],
  [/^perl[0-9.]*$/, interpreterHandler({ code: 'eE' })],
  [/^ruby[0-9.]*$/, interpreterHandler({ code: 'e', value: 'rCEI' })],
  [/^(lua|luajit)[0-9.]*$/, interpreterHandler({ code: 'e', value: 'l' })],
  [/^php[0-9.]*$/, interpreterHandler({ code: 'rBRE', value: 'cdfz' })],
  [/^(tclsh|wish)[0-9.]*$/, interpreterHandler({ code: '' })],
];

/** Wrappers judged by their inner command only: they change neither what runs nor what it may touch. */
const transparentWrappers = new Set(['nice', 'nohup', 'timeout', 'time', 'stdbuf', 'command', 'exec']);

for (const [name, spec] of Object.entries(wrapperSpecs)) {
  handlers[name] = (inv) => {
    const parsed = inv.unwrap(spec);
    const writes = name === 'time' && hasOption(parsed, 'o', 'output', 'a', 'append');
    if (transparentWrappers.has(name) && !parsed.unknown && !parsed.noCommand && parsed.rest.length > 0 && !writes) {
      inv.transparent();
    }
  };
}
for (const shell of shells) handlers[shell] = shellHandler;
