/**
 * The shell language itself (issue #11, "allow needs proof"): places where bash or dash would run, read or look
 * up something other than what the words show. Assignments to variables that matter in every syntax, arithmetic
 * that evaluates variables as code, substitutions hidden in words the grammar does not parse (parameter-expansion
 * operator words, here-document bodies), and the builtins that change how later names resolve.
 */
import type { Analysis } from './analysis';
import { isLoaderVariable, isSensitiveVariable } from './environment';
import type { Verdict } from './policy-schema';
import type { Arg } from './types';
import { unknownArg } from './words';

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Shell-maintained variables whose value is always a number, whatever the environment held. */
const numericSpecials = new Set([
  '#',
  '?',
  '$',
  '!',
  'RANDOM',
  'SRANDOM',
  'SECONDS',
  'LINENO',
  'BASHPID',
  'PPID',
  'UID',
  'EUID',
  'EPOCHSECONDS',
  'OPTIND',
]);

/** Names known to hold numbers; once frozen (a name reference exists: any name may be assigned through it), none. */
export class NumericNames extends Set<string> {
  frozen = false;
  override add(name: string): this {
    if (!this.frozen) super.add(name);
    return this;
  }
  freeze(): void {
    this.frozen = true;
    this.clear();
  }
  /** An empty set that stays frozen if this one is. */
  fresh(): NumericNames {
    const out = new NumericNames();
    out.frozen = this.frozen;
    return out;
  }
}

/**
 * What one command line's walk knows about variables, shared by the walk and the builtin checks: which
 * variables hold a number for sure (set in this text from a literal integer or arithmetic, nothing else seen
 * assigning them), so arithmetic on them cannot run code.
 */
export class ShellState {
  numeric = new NumericNames();
  /** Functions defined in this text: a command with that name runs the function, not a program. */
  functions = new Set<string>();
  /** Variables given the integer attribute (`declare -i`): every later assignment to them is arithmetic. */
  integers = new Set<string>();
}

/** Why assigning this variable would change what runs or what it reads; undefined when it does not matter. */
export function assignmentConcern(name: string): { verdict: Verdict; message: string } | undefined {
  let concern = concernCache.get(name);
  if (concern === undefined) {
    concern = computeConcern(name) ?? null;
    // bounded: names come from untrusted text
    if (concernCache.size > 4096) concernCache.clear();
    concernCache.set(name, concern);
  }
  return concern ?? undefined;
}

const concernCache = new Map<string, { verdict: Verdict; message: string } | null>();

function computeConcern(name: string): { verdict: Verdict; message: string } | undefined {
  if (!identifier.test(name)) return { verdict: 'approve', message: `the variable name ${name} is not a plain name` };
  if (isLoaderVariable(name)) return { verdict: 'deny', message: `setting ${name} loads code before any program runs` };
  if (isSensitiveVariable(name) || shellOnlyVariables.has(name))
    return { verdict: 'approve', message: `setting ${name} changes which program or code runs or what it reads` };
  return undefined;
}

/** Read by bash itself, beyond the environment list: catalogues for `$"…"`, the trace descriptor, compat mode. */
const shellOnlyVariables = new Set(['TEXTDOMAIN', 'TEXTDOMAINDIR', 'BASH_XTRACEFD', 'BASH_COMPAT', 'FUNCNEST']);

/**
 * Judges a word that names a variable to be assigned (`read NAME`, `printf -v NAME`, `for NAME in`, `declare
 * NAME=…`). A name known only at run time, a name that matters, or a subscript that runs code is not allowed.
 */
export function checkAssignedName(arg: Arg, acc: Analysis, state: ShellState, shown: readonly Arg[]): void {
  if (arg.dynamic) {
    acc.opaque(shown, `the name of the variable ${arg.display} assigns is known only at run time`);
    return;
  }
  const text = arg.value;
  const bracket = text.indexOf('[');
  const name = bracket >= 0 ? text.slice(0, bracket) : text;
  const concern = assignmentConcern(name);
  if (concern) acc.opaque(shown, concern.message, concern.verdict);
  if (bracket >= 0) checkArithmeticText(text.slice(bracket + 1, text.lastIndexOf(']')), acc, state, shown);
  state.numeric.delete(name);
}

const assignmentOperator = /^\s*(?:\[[^\]]*\]\s*)?(?:(?:<<|>>|[-+*/%&^|])?=(?!=)|\+\+|--)/;

/**
 * Arithmetic text (`$((…))`, `((…))`, `let`, subscripts, `[[ a -eq b ]]` operands): bash evaluates every variable
 * named in it as an expression of its own, so a value like `a[$(cmd)]` runs `cmd`. Any variable not known to hold
 * a number is not allowed, nor is an assignment to a variable that matters. Substitutions in the text are walked
 * elsewhere; quoted `$(…)` reaching it is caught here.
 */
export function checkArithmeticText(text: string, acc: Analysis, state: ShellState, shown: readonly Arg[]): void {
  if ((text.includes('`') || text.includes('$(')) && !onlyNumericSubstitutions(text)) {
    // the substitutions themselves are walked as commands; their output is then evaluated as an expression
    acc.opaque(
      shown,
      /['"\\]/.test(text)
        ? 'quoted text reaches arithmetic evaluation, which runs $(…) in it'
        : 'arithmetic evaluates the output of a substitution as code',
    );
  }
  const scrubbed = text
    .replace(/\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`/g, ' 0 ')
    .replace(/'[^']*'/g, ' 0 ')
    // `${#name}` and `${#name[@]}` are lengths: numbers, whatever the variable holds
    .replace(/\$\{#[A-Za-z_0-9@*]*(\[[@*]\])?\}/g, ' 0 ')
    .replace(/\b\d+#[0-9A-Za-z@_]+/g, ' 0 ')
    .replace(/\b0[xX][0-9A-Fa-f]+/g, ' 0 ')
    .replace(/\b\d+/g, ' 0 ');
  const unknown = new Set<string>();
  const reference = /\$\{?([A-Za-z_][A-Za-z0-9_]*|[0-9#?$!@*-])|([A-Za-z_][A-Za-z0-9_]*)/g;
  for (let match = reference.exec(scrubbed); match; match = reference.exec(scrubbed)) {
    const name = (match[1] ?? match[2]) as string;
    const after = scrubbed.slice(match.index + match[0].length);
    const before = scrubbed.slice(0, match.index);
    const assigned = match[2] !== undefined && (assignmentOperator.test(after) || /(\+\+|--)\s*$/.test(before));
    if (assigned) {
      const concern = assignmentConcern(name);
      if (concern) acc.opaque(shown, `arithmetic: ${concern.message}`, concern.verdict);
      // a plain `=` does not read the old value; the new one is a number
      if (/^\s*=(?!=)/.test(after)) {
        state.numeric.add(name);
        continue;
      }
    }
    if (!numericSpecials.has(name) && !state.numeric.has(name)) unknown.add(name);
    if (assigned) state.numeric.add(name);
  }
  if (unknown.size > 0) {
    const names = [...unknown].slice(0, 3).join(', ');
    acc.opaque(
      shown,
      `arithmetic evaluates the value of ${names} as code (a value like a[$(cmd)] runs cmd): it is known only at run time`,
    );
  }
}

/**
 * Forgets the numeric variables that a piece of text may assign something other than a number: the body of a loop
 * (its second pass runs after its own assignments) or code that runs in this shell (`eval '…'`). A name counts
 * as kept only where every mention of it is a read (`$n`, `${n}`), inside arithmetic (`spans`, from the parse
 * tree: there every assignment is a number) or an assignment of digits or arithmetic (`n=0`, `n=$((n+1))`).
 */
export function forgetAssignedIn(
  text: string,
  state: ShellState,
  spans: ReadonlyArray<readonly [number, number]> = [],
): void {
  if (state.numeric.size === 0) return;
  for (const name of [...state.numeric]) {
    if (!text.includes(name)) continue;
    const mention = new RegExp(`(?<![A-Za-z0-9_])${name}(?![A-Za-z0-9_])`, 'g');
    for (let match = mention.exec(text); match; match = mention.exec(text)) {
      const at = match.index;
      // inside arithmetic every assignment is a number
      if (spans.some(([from, to]) => at > from && at < to)) continue;
      if (text[at - 1] === '$' || text.slice(at - 2, at) === '${' || text.slice(at - 3, at) === '${#') continue;
      if (/^=(-?\d+(?![^\s;&|)])|\$\(\(|\$\[)/.test(text.slice(at + name.length))) continue;
      state.numeric.delete(name);
      break;
    }
  }
}

/** Commands whose output is a number whatever the machine holds: `$(nproc)`, `$(id -u)`, `$(… | wc -l)`. */
const numericProducer =
  /^\s*(?:nproc(?: --all)?|id -[ug]r?|date \+%[sN](?:%N)?|getconf [A-Z_]+|wc -[lcwm](?:\s*<\s*[\w./-]+)?)\s*$/;

/** A pipeline (single `|` only: no `||`, `;`, `&`, newlines) whose last stage prints a number. */
function numericPipeline(body: string): boolean {
  if (/[;&\n<>]|\|\|/.test(body.replace(/<\s*[\w./-]+\s*$/, ''))) return false;
  const stages = body.split('|');
  return numericProducer.test(stages[stages.length - 1] as string);
}

function onlyNumericSubstitutions(text: string): boolean {
  if (/['"\\`]/.test(text)) return false;
  const bodies = [...text.matchAll(/\$\(((?:[^()]|\([^()]*\))*)\)/g)].map((match) => match[1] as string);
  const rest = text.replace(/\$\(((?:[^()]|\([^()]*\))*)\)/g, '');
  return bodies.length > 0 && !rest.includes('$(') && bodies.every(numericPipeline);
}

/** Names an arithmetic text assigns, for the walk's record of variables that hold numbers. */
export function arithmeticAssignments(text: string): string[] {
  const out: string[] = [];
  const name = /([A-Za-z_][A-Za-z0-9_]*)/g;
  for (let match = name.exec(text); match; match = name.exec(text)) {
    const after = text.slice(match.index + match[0].length);
    if (assignmentOperator.test(after) || /(\+\+|--)\s*$/.test(text.slice(0, match.index)))
      out.push(match[1] as string);
  }
  return out;
}

/** Whether a word is a number, or expands only to numbers (arithmetic, `$#`, `$!`, a variable known to be one). */
export function isNumericValue(arg: Arg | undefined, state?: ShellState): boolean {
  if (!arg) return false;
  if (!arg.dynamic) return /^[-+]?\d+$/.test(arg.value.trim());
  return arg.segments.every((seg) => {
    if ('lit' in seg) return /^[-+]?\d*$/.test(seg.lit);
    if (/^\$(\(\(|\[)/.test(seg.dyn) || /^\$\{#[A-Za-z_0-9@*]*\}$/.test(seg.dyn)) return true;
    const name = /^\$\{?([A-Za-z_][A-Za-z0-9_]*|[#?$!])\}?$/.exec(seg.dyn)?.[1];
    return name !== undefined && (numericSpecials.has(name) || state?.numeric.has(name) === true);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Substitutions in text the grammar leaves unparsed

/** Substitutions found in a piece of text: the code of `$(…)`/backticks/`<(…)`, arithmetic, `${…}` bodies. */
export interface Embedded {
  commands: string[];
  arithmetic: string[];
  parameters: string[];
  /** Text the scanner could not read to its end (an unclosed quote or substitution). */
  broken: boolean;
}

type Quoting = 'unquoted' | 'double' | 'heredoc';

/**
 * Finds the substitutions bash performs in a word (or a here-document body): `$(…)`, backticks, `$((…))`, `$[…]`,
 * `${…}` and, unquoted, `<(…)` / `>(…)`. Single quotes protect only where bash says they do.
 */
export function scanEmbedded(text: string, quoting: Quoting): Embedded {
  const out: Embedded = { commands: [], arithmetic: [], parameters: [], broken: false };
  scanInto(text.includes('\\\n') ? removeContinuations(text) : text, 0, quoting, out);
  return out;
}

/** Backslash-newline pairs disappear before the shell reads a word (`$\<newline>(id)` is `$(id)`). */
export function removeContinuations(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\\' && text[i + 1] === '\n') {
      i++;
      continue;
    }
    out += ch;
    if (ch === '\\' && i + 1 < text.length) out += text[++i];
  }
  return out;
}

/** Scans from `start` to the end of the text, collecting what it finds; `broken` when something is not closed. */
function scanInto(text: string, start: number, quoting: Quoting, out: Embedded): void {
  let inDouble = quoting === 'double';
  for (let i = start; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === "'" && !inDouble && quoting === 'unquoted') {
      const end = text.indexOf("'", i + 1);
      if (end < 0) {
        out.broken = true;
        return;
      }
      i = end;
      continue;
    }
    if (ch === '"' && quoting !== 'heredoc') {
      inDouble = !inDouble;
      continue;
    }
    if (ch === '`') {
      let end = i + 1;
      while (end < text.length && text[end] !== '`') end += text[end] === '\\' ? 2 : 1;
      if (end >= text.length) {
        out.broken = true;
        return;
      }
      out.commands.push(text.slice(i + 1, end).replace(/\\([`$\\])/g, '$1'));
      i = end;
      continue;
    }
    if ((ch === '<' || ch === '>') && text[i + 1] === '(' && !inDouble && quoting === 'unquoted') {
      const end = matchingParen(text, i + 2);
      if (end < 0) {
        out.broken = true;
        return;
      }
      out.commands.push(text.slice(i + 2, end));
      i = end;
      continue;
    }
    if (ch !== '$') continue;
    const next = text[i + 1];
    if (next === '(' && text[i + 2] === '(') {
      const inner = matchingParen(text, i + 3);
      if (inner >= 0 && text[inner + 1] === ')') {
        const body = text.slice(i + 3, inner);
        out.arithmetic.push(body);
        scanInto(body, 0, 'unquoted', out);
        i = inner + 1;
        continue;
      }
      // `$( (…) )`: a command substitution of a subshell
    }
    if (next === '(') {
      const end = matchingParen(text, i + 2);
      if (end < 0) {
        out.broken = true;
        return;
      }
      out.commands.push(text.slice(i + 2, end));
      i = end;
      continue;
    }
    if (next === '[') {
      const end = matchingBracket(text, i + 2, '[', ']');
      if (end < 0) {
        out.broken = true;
        return;
      }
      const body = text.slice(i + 2, end);
      out.arithmetic.push(body);
      scanInto(body, 0, 'unquoted', out);
      i = end;
      continue;
    }
    if (next === '{') {
      const end = matchingBracket(text, i + 2, '{', '}');
      if (end < 0) {
        out.broken = true;
        return;
      }
      out.parameters.push(text.slice(i + 2, end));
      i = end;
      continue;
    }
    if (next === "'" && quoting === 'unquoted' && !inDouble) {
      let end = i + 2;
      while (end < text.length && text[end] !== "'") end += text[end] === '\\' ? 2 : 1;
      if (end >= text.length) {
        out.broken = true;
        return;
      }
      i = end;
    }
  }
}

/** The index of the `)` closing a `(` whose content starts at `from` (quote- and nesting-aware), or -1. */
function matchingParen(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (ch === '"') {
      i = skipDouble(text, i + 1);
      if (i < 0) return -1;
    } else if (ch === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return i;
  }
  return -1;
}

function skipDouble(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === '"') return i;
    else if (ch === '$' && text[i + 1] === '(') {
      const end = matchingParen(text, i + 2);
      if (end < 0) return -1;
      i = end;
    }
  }
  return -1;
}

function matchingBracket(text: string, from: number, open: string, close: string): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === "'" && open === '{') {
      // single quotes inside ${…} quote in most operators; an unmatched one is read as a literal
      const end = text.indexOf("'", i + 1);
      if (end >= 0 && end < text.indexOf(close, i + 1) + 1) i = end;
    } else if (ch === '"') {
      const end = skipDouble(text, i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (ch === '$' && text[i + 1] === '(') {
      const end = matchingParen(text, i + 2);
      if (end < 0) return -1;
      i = end;
    } else if (ch === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (ch === open) depth++;
    else if (ch === close && --depth === 0) return i;
  }
  return -1;
}

/** One `${…}` body split into what bash treats differently: the name, a subscript, the operator and its word. */
export interface ParameterParts {
  indirect: boolean;
  length: boolean;
  name: string;
  subscript: string | undefined;
  operator: string;
  word: string;
}

export function splitParameter(body: string): ParameterParts | undefined {
  const match = /^(!?)(#?)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[#?$!@*-])(\[)?/.exec(body);
  if (!match) return undefined;
  let rest = body.slice(match[0].length);
  let subscript: string | undefined;
  if (match[4]) {
    const end = matchingBracket(body, match[0].length, '[', ']');
    if (end < 0) return undefined;
    subscript = body.slice(match[0].length, end);
    rest = body.slice(end + 1);
  }
  const op = /^(:[-=?+]|[-=?+]|##?|%%?|\/[/#%]?|\^\^?|,,?|@[A-Za-z]|:)?/.exec(rest)?.[0] ?? '';
  return {
    indirect: match[1] === '!',
    length: match[2] === '#',
    name: match[3] as string,
    subscript,
    operator: op,
    word: rest.slice(op.length),
  };
}

/** Builds the argument shown in reasons for embedded text. */
export function shownText(text: string): Arg[] {
  return [unknownArg(text.length > 120 ? `${text.slice(0, 120)}…` : text, false)];
}

// ---------------------------------------------------------------------------------------------------------------
// Builtins that assign variables, evaluate arithmetic or change how later names resolve

/** `set` options that only change error handling, tracing or globbing in the safe direction. */
const harmlessSetLetters = new Set([...'abefhmnuvxBCEHPT']);
const harmlessSetNames = new Set([
  'allexport',
  'braceexpand',
  'errexit',
  'errtrace',
  'functrace',
  'hashall',
  'histexpand',
  'history',
  'ignoreeof',
  'monitor',
  'noclobber',
  'noexec',
  'noglob',
  'notify',
  'nounset',
  'physical',
  'pipefail',
  'verbose',
  'xtrace',
  'emacs',
  'vi',
]);
/** `shopt` options that change only globbing, matching, history or the prompt's look. */
const harmlessShoptNames = new Set([
  'autocd',
  'cdspell',
  'checkhash',
  'checkjobs',
  'checkwinsize',
  'cmdhist',
  'dirspell',
  'direxpand',
  'dotglob',
  'extglob',
  'extquote',
  'failglob',
  'globasciiranges',
  'globstar',
  'histappend',
  'histreedit',
  'histverify',
  'huponexit',
  'inherit_errexit',
  'lastpipe',
  'lithist',
  'localvar_unset',
  'mailwarn',
  'no_empty_cmd_completion',
  'nocaseglob',
  'nocasematch',
  'nullglob',
  'progcomp',
  'progcomp_alias',
  'promptvars',
  'shift_verbose',
  'sourcepath',
  'xpg_echo',
  'noexpand_translation',
  'patsub_replacement',
  'varredir_close',
  'assoc_expand_once',
  'globskipdots',
]);

/** Options of `read`, `mapfile` and `wait` that take a value (the rest are flags). */
const readValueOptions = 'adinNptu';
const mapfileValueOptions = 'dnOsuCc';

/** Checks one command that is a shell builtin with language-level effects. Called for every command found. */
export function checkShellBuiltin(args: readonly Arg[], acc: Analysis, program: string): void {
  const state = acc.shell;
  const name = args[0];
  if (name && !name.dynamic && state.functions.has(name.value)) {
    acc.opaque(args, `${name.value} is a function defined in this text: it runs the function, not the program`);
  }
  switch (program) {
    case 'read':
      checkNameArgs(args, acc, readValueOptions, 'a', true);
      return;
    case 'mapfile':
    case 'readarray':
      checkNameArgs(args, acc, mapfileValueOptions, '', false, 'MAPFILE');
      return;
    case 'wait':
      checkNameArgs(args, acc, 'p', 'p', false, undefined, true);
      return;
    case 'getopts': {
      const target = args[2];
      if (target) checkAssignedName(target, acc, state, args);
      return;
    }
    case 'printf':
      checkPrintf(args, acc);
      return;
    case 'let':
      for (const arg of args.slice(1)) {
        if (arg.dynamic) acc.opaque(args, `let evaluates ${arg.display}, which is known only at run time`);
        else checkArithmeticText(arg.value, acc, state, args);
        for (const assigned of arithmeticAssignments(arg.value)) state.numeric.add(assigned);
      }
      return;
    case 'test':
    case '[':
      checkTestArgs(args.slice(1), acc, args);
      return;
    case 'declare':
    case 'typeset':
    case 'local':
    case 'export':
    case 'readonly':
      checkDeclarationArgs(args, acc);
      return;
    case 'set':
      checkSetArgs(args, acc);
      return;
    case 'shopt':
      checkShoptArgs(args, acc);
      return;
    case 'compgen':
    case 'complete':
      for (let i = 1; i < args.length; i++) {
        const arg = args[i] as Arg;
        if (arg.dynamic) acc.opaque(args, `${program}'s options are known only at run time`);
        else if (/^-[A-Za-z]*[CF]/.test(arg.value)) acc.opaque(args, `${program} -C/-F runs a command or function`);
        else if (/^-[A-Za-z]*W$/.test(arg.value)) {
          const words = args[i + 1];
          if (words && (words.dynamic || /[$`]/.test(words.value)))
            acc.opaque(args, `${program} -W expands its word list, which runs $(…) in it`);
          i++;
        }
      }
      return;
    case 'fc':
      acc.opaque(args, 'fc runs commands from the history or an editor');
      return;
    case 'bind':
      if (args.some((arg, i) => i > 0 && (arg.dynamic || /^-[A-Za-z]*x/.test(arg.value))))
        acc.opaque(args, 'bind -x runs a command on a key');
      return;
  }
}

function unknownNumber(arg: Arg, acc: Analysis, shown: readonly Arg[]): void {
  acc.opaque(
    shown,
    `${arg.display} is evaluated as arithmetic, which can run code: its value is known only at run time`,
  );
}

/** `read [-a NAME] NAME…`, `mapfile [-O n] NAME`, `wait -p NAME`: the names they assign. */
function checkNameArgs(
  args: readonly Arg[],
  acc: Analysis,
  valueOptions: string,
  nameOptions: string,
  restAreNames: boolean,
  defaultName?: string,
  onlyOptions = false,
): void {
  const state = acc.shell;
  const names: Arg[] = [];
  let i = 1;
  for (; i < args.length; i++) {
    const arg = args[i] as Arg;
    if (arg.dynamic && arg.value.startsWith('-') === false && /^\$/.test(arg.display)) break;
    if (arg.value === '--') {
      i++;
      break;
    }
    if (!arg.value.startsWith('-') || arg.value === '-') break;
    if (arg.dynamic) {
      acc.opaque(args, `${args[0]?.value}'s options are known only at run time`);
      return;
    }
    for (let j = 1; j < arg.value.length; j++) {
      const letter = arg.value[j] as string;
      if (!valueOptions.includes(letter)) continue;
      const inline = arg.value.slice(j + 1);
      const value = inline ? undefined : args[++i];
      if (nameOptions.includes(letter)) {
        if (value) names.push(value);
        else if (inline) checkAssignedName({ ...arg, value: inline, display: inline }, acc, state, args);
      }
      break;
    }
  }
  if (!onlyOptions) {
    const rest = args.slice(i);
    if (restAreNames) names.push(...rest);
    else if (rest.length > 0) names.push(rest[rest.length - 1] as Arg);
    else if (defaultName) state.numeric.delete(defaultName);
  }
  for (const target of names) checkAssignedName(target, acc, state, args);
}

/** `printf -v NAME` assigns NAME (its integer conversions do not evaluate expressions: bash checks numbers). */
function checkPrintf(args: readonly Arg[], acc: Analysis): void {
  const state = acc.shell;
  let i = 1;
  while (i < args.length) {
    const arg = args[i] as Arg;
    if (arg.value === '--') {
      i++;
      break;
    }
    if (arg.value === '-v' && !arg.dynamic) {
      const target = args[i + 1];
      if (target) checkAssignedName(target, acc, state, args);
      i += 2;
      continue;
    }
    if (arg.value.startsWith('-v') && !arg.dynamic) {
      checkAssignedName({ ...arg, value: arg.value.slice(2), display: arg.display.slice(2) }, acc, state, args);
      i++;
      continue;
    }
    break;
  }
}

/** `test`/`[`: `-v NAME` evaluates NAME's subscript (`-eq` and friends only accept numbers here, unlike `[[`). */
function checkTestArgs(operands: readonly Arg[], acc: Analysis, shown: readonly Arg[]): void {
  operands.forEach((arg, i) => {
    if (arg.dynamic || arg.value !== '-v') return;
    const target = operands[i + 1];
    if (target && (target.dynamic || target.value.includes('[')))
      acc.opaque(shown, `test -v ${target.display} evaluates a subscript, which can run code`);
  });
}

/** `declare`/`export`/… (from the grammar's declaration command, or reached as words: `command export X=…`). */
export function checkDeclarationArgs(args: readonly Arg[], acc: Analysis): void {
  const state = acc.shell;
  const keyword = args[0]?.value;
  let nameref = false;
  let integer = false;
  for (const arg of args.slice(1)) {
    if (!arg.dynamic && /^[-+][A-Za-z]+$/.test(arg.value)) {
      if (arg.value.startsWith('-') && arg.value.includes('n')) {
        nameref = true;
        // any name may be assigned through a reference from now on: no variable is known to hold a number
        state.numeric.freeze();
      }
      if (arg.value.startsWith('-') && arg.value.includes('i')) integer = true;
      if (arg.value.startsWith('-') && arg.value.includes('f') && (keyword === 'export' || arg.value.includes('x')))
        acc.opaque(args, 'exporting a function changes what a name runs in child shells');
      continue;
    }
    const first = arg.segments[0];
    const eq = first && 'lit' in first ? first.lit.indexOf('=') : -1;
    if (eq < 0 && arg.dynamic) {
      acc.opaque(args, `the variable ${arg.display} declares is known only at run time`);
      continue;
    }
    const name = eq >= 0 ? (first as { lit: string }).lit.slice(0, eq) : arg.value;
    const nameArg: Arg = {
      ...arg,
      value: name,
      display: name,
      dynamic: false,
      segments: [{ lit: name, quoted: true }],
    };
    if (integer) state.integers.add(name.replace(/\[.*$/s, ''));
    if (eq < 0) {
      if (nameref || integer) checkAssignedName(nameArg, acc, state, args);
      continue;
    }
    checkAssignedName(nameArg, acc, state, args);
    const value = arg.value.slice(arg.value.indexOf('=') + 1);
    if (nameref) {
      const target = value.replace(/\[.*$/s, '');
      if (arg.dynamic || value.includes('[') || !identifier.test(target) || assignmentConcern(target))
        acc.opaque(
          args,
          `the name reference ${arg.display} points at a variable that matters or is known only at run time`,
        );
    }
    const valueArg: Arg = {
      ...arg,
      value,
      segments: arg.dynamic ? arg.segments.slice(1) : [{ lit: value, quoted: true }],
    };
    if (integer && !isNumericValue(valueArg, state)) {
      if (arg.dynamic) unknownNumber(arg, acc, args);
      else checkArithmeticText(value, acc, state, args);
    }
    if (integer || isNumericValue(valueArg, state)) state.numeric.add(name);
    else state.numeric.delete(name);
  }
}

function checkSetArgs(args: readonly Arg[], acc: Analysis): void {
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as Arg;
    if (arg.dynamic) {
      acc.opaque(args, 'set options known only at run time could change how later words are read');
      return;
    }
    if (arg.value === '--' || arg.value === '-') return;
    if (!/^[-+]/.test(arg.value)) return;
    if (arg.value === '-o' || arg.value === '+o') {
      const option = args[++i];
      if (!option) return;
      if (option.dynamic || !harmlessSetNames.has(option.value))
        acc.opaque(args, `set -o ${option.display} changes how the shell reads or runs later commands`);
      continue;
    }
    for (const letter of arg.value.slice(1)) {
      if (!harmlessSetLetters.has(letter)) {
        acc.opaque(args, `set ${arg.value[0]}${letter} changes how the shell reads or runs later commands`);
        return;
      }
    }
  }
}

function checkShoptArgs(args: readonly Arg[], acc: Analysis): void {
  let setting = false;
  for (const arg of args.slice(1)) {
    if (arg.dynamic) {
      acc.opaque(args, 'shopt options known only at run time could change how later words are read');
      return;
    }
    if (/^-[A-Za-z]+$/.test(arg.value)) {
      if (/[su]/.test(arg.value)) setting = true;
      continue;
    }
    if (setting && !harmlessShoptNames.has(arg.value) && !harmlessSetNames.has(arg.value))
      acc.opaque(args, `shopt ${arg.value} changes how the shell reads or runs later commands`);
  }
}
