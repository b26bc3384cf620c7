import { dirname, evidenceName, normalizeAbsolutePath, programBasename } from './paths';
import type { Arg } from './types';

/**
 * Rule patterns (DESIGN §4): words split like a shell, each literal or a glob (`*`, `?`, `[…]` unquoted); a
 * trailing `*` word means "any further arguments, or none"; `**` as a whole word means "any number of words" at
 * any position (an extension, so a rule can say `sed ** -i **`).
 */
export class PatternError extends Error {
  constructor(
    readonly pattern: string,
    message: string,
  ) {
    super(`invalid rule pattern ${JSON.stringify(pattern)}: ${message}`);
    this.name = 'PatternError';
  }
}

type PatternWord = { kind: 'literal'; text: string } | { kind: 'glob'; re: RegExp; all: boolean } | { kind: 'rest' };

interface ProgramPattern {
  text: string;
  isPath: boolean;
  /** The program word contains a glob character. */
  glob: boolean;
  /** Matches the whole program word (case-sensitive): for allow rules. */
  exact: RegExp;
  /** Matches the basename case-insensitively, `.exe` stripped: evidence for deny, approve and confirm. */
  evidence: RegExp;
}

export interface CompiledPattern {
  source: string;
  program: ProgramPattern;
  words: PatternWord[];
  /**
   * A rule set entry's read-only contract (src/contracts.ts): a certain match whose words it refuses (it returns
   * why) is no match.
   */
  contract?: (args: readonly Arg[]) => string | undefined;
}

/** Three-valued match: `maybe` when the command's run-time values could match but are not known. */
export type MatchResult = 0 | 1 | 2;
export const noMatch = 0;
export const maybeMatch = 1;
export const certainMatch = 2;

interface RawWord {
  text: string;
  regex: string;
  glob: boolean;
}

/** Splits a pattern like a shell: quotes and backslashes make characters literal. */
export function splitPatternWords(source: string): RawWord[] {
  const words: RawWord[] = [];
  let current: RawWord | undefined;
  let i = 0;
  const add = (ch: string, quoted: boolean) => {
    current ??= { text: '', regex: '', glob: false };
    current.text += ch;
    if (!quoted && (ch === '*' || ch === '?')) {
      current.glob = true;
      current.regex += ch === '*' ? '.*' : '.';
    } else {
      current.regex += escapeRegex(ch);
    }
  };
  while (i < source.length) {
    const ch = source[i] as string;
    if (/\s/.test(ch)) {
      if (current) words.push(current);
      current = undefined;
      i++;
    } else if (ch === "'") {
      const end = source.indexOf("'", i + 1);
      if (end < 0) throw new PatternError(source, 'unclosed single quote');
      current ??= { text: '', regex: '', glob: false };
      for (const c of source.slice(i + 1, end)) add(c, true);
      i = end + 1;
    } else if (ch === '"') {
      current ??= { text: '', regex: '', glob: false };
      i++;
      while (i < source.length && source[i] !== '"') {
        if (source[i] === '\\' && i + 1 < source.length && '"\\$`'.includes(source[i + 1] as string)) i++;
        add(source[i] as string, true);
        i++;
      }
      if (i >= source.length) throw new PatternError(source, 'unclosed double quote');
      i++;
    } else if (ch === '\\') {
      if (i + 1 >= source.length) throw new PatternError(source, 'trailing backslash');
      add(source[i + 1] as string, true);
      i += 2;
    } else if (ch === '[') {
      const end = source.indexOf(']', i + 2);
      if (end < 0 || /\s/.test(source.slice(i, end))) {
        add(ch, true);
        i++;
      } else {
        current ??= { text: '', regex: '', glob: false };
        let body = source.slice(i + 1, end);
        const negate = body.startsWith('!') || body.startsWith('^');
        if (negate) body = body.slice(1);
        current.text += source.slice(i, end + 1);
        current.regex += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
        current.glob = true;
        i = end + 1;
      }
    } else {
      add(ch, false);
      i++;
    }
  }
  if (current) words.push(current);
  return words;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** Compiles a rule pattern; throws PatternError when it is not one. */
export function compilePattern(source: string): CompiledPattern {
  const raw = splitPatternWords(source);
  const first = raw[0];
  if (!first) throw new PatternError(source, 'no program');
  if (first.text === '**' || (first.glob && first.text.replace(/\*/g, '') === '')) {
    throw new PatternError(source, 'the program must be named, not a bare wildcard');
  }
  const isPath = first.text.includes('/');
  if (isPath && !first.text.startsWith('/')) throw new PatternError(source, 'a program path must be absolute');
  const baseRegex = regexOfLastComponent(first);
  const program: ProgramPattern = {
    text: first.text,
    isPath,
    glob: first.glob,
    exact: new RegExp(`^${first.regex}$`),
    evidence: new RegExp(`^${baseRegex.replace(/\\\.exe$/i, '')}(?:\\.exe)?$`, 'i'),
  };
  const words: PatternWord[] = raw.slice(1).map((word, index, all) => {
    if (word.glob && (word.text === '**' || (word.text === '*' && index === all.length - 1))) return { kind: 'rest' };
    if (!word.glob) return { kind: 'literal', text: word.text };
    return { kind: 'glob', re: new RegExp(`^${word.regex}$`, 's'), all: word.regex === '.*' };
  });
  return { source, program, words };
}

function regexOfLastComponent(word: RawWord): string {
  // the regex source escapes `/` as `\/`; everything after the last one is the basename
  const index = word.regex.lastIndexOf('\\/');
  return index < 0 ? word.regex : word.regex.slice(index + 2);
}

/** A regex for the values an argument may take at run time. */
function argRegex(arg: Arg, segments = arg.segments): RegExp {
  let source = '';
  for (const seg of segments) {
    if ('dyn' in seg) source += '.*';
    else if (seg.quoted) source += escapeRegex(seg.lit);
    else
      source += seg.lit
        .replace(/[.+^${}()|\\/-]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.');
  }
  try {
    return new RegExp(`^${source}$`, 's');
  } catch {
    return /^/;
  }
}

/** Who is asking: allow rules need proof (trusted program, known words), the others need only evidence. */
export interface MatchContext {
  needsProof: boolean;
  trustedDirs: ReadonlySet<string>;
}

function matchProgram(program: ProgramPattern, name: Arg, ctx: MatchContext): MatchResult {
  if (ctx.needsProof) {
    if (name.dynamic || name.glob) return noMatch;
    const value = name.value;
    if (value.includes('/')) {
      if (!value.startsWith('/')) return noMatch;
      const normalized = normalizeAbsolutePath(value);
      if (program.isPath) return program.exact.test(normalized) ? certainMatch : noMatch;
      return ctx.trustedDirs.has(dirname(normalized)) && program.exact.test(programBasename(normalized))
        ? certainMatch
        : noMatch;
    }
    if (!program.isPath) return program.exact.test(value) ? certainMatch : noMatch;
    // `/usr/bin/systemctl status *` also matches a bare `systemctl`, found on the trusted path
    const dir = dirname(program.text);
    return ctx.trustedDirs.has(dir) && program.exact.test(`${dir}/${value}`) ? certainMatch : noMatch;
  }
  if (!name.dynamic && !name.glob) return program.evidence.test(evidenceName(name.value)) ? certainMatch : noMatch;
  // Unknown parts: only the part after the last literal slash can be evidence, and only if some of it is literal.
  const tail: Arg['segments'] = [];
  for (const seg of name.segments) {
    if ('lit' in seg && (seg.lit.includes('/') || seg.lit.includes('\\'))) {
      tail.length = 0;
      const rest = programBasename(seg.lit);
      if (rest) tail.push({ lit: rest, quoted: seg.quoted });
    } else tail.push(seg);
  }
  if (!tail.some((seg) => 'lit' in seg && seg.lit !== '')) return noMatch;
  const re = argRegex(name, tail);
  const base = program.text.slice(program.text.lastIndexOf('/') + 1);
  return re.test(base) || re.test(base.toLowerCase()) ? maybeMatch : noMatch;
}

function mayMatchWord(word: PatternWord, arg: Arg): boolean {
  if (word.kind === 'literal') return argRegex(arg).test(word.text);
  return true;
}

function wordMatches(word: PatternWord, value: string): boolean {
  if (word.kind === 'literal') return word.text === value;
  if (word.kind === 'glob') return word.re.test(value);
  return true;
}

/** Matches a compiled pattern against a command's words (program first), then its contract if it has one. */
export function matchPattern(pattern: CompiledPattern, args: readonly Arg[], ctx: MatchContext): MatchResult {
  const result = matchPatternWords(pattern, args, ctx);
  if (result === noMatch || !pattern.contract) return result;
  return pattern.contract(args) === undefined ? result : noMatch;
}

function matchPatternWords(pattern: CompiledPattern, args: readonly Arg[], ctx: MatchContext): MatchResult {
  const name = args[0];
  if (!name) return noMatch;
  const programResult = matchProgram(pattern.program, name, ctx);
  if (programResult === noMatch) return noMatch;
  const words = pattern.words;
  const simple = simpleMatch(words, args);
  if (simple !== undefined) return Math.min(programResult, simple) as MatchResult;
  const known = knownWordsMatch(words, args);
  if (known !== undefined) return Math.min(programResult, known) as MatchResult;
  const memo = new Int8Array((words.length + 1) * (args.length + 1)).fill(-1);
  const step = (pi: number, ai: number): MatchResult => {
    const key = pi * (args.length + 1) + ai;
    const cached = memo[key] as number;
    if (cached >= 0) return cached as MatchResult;
    const result = stepUncached(pi, ai);
    memo[key] = result;
    return result;
  };
  const stepUncached = (pi: number, ai: number): MatchResult => {
    const word = words[pi];
    if (!word) {
      if (ai === args.length) return certainMatch;
      for (let k = ai; k < args.length; k++) if (!args[k]?.splittable) return noMatch;
      return maybeMatch;
    }
    if (word.kind === 'rest') {
      let best: MatchResult = noMatch;
      for (let k = ai; k <= args.length && best < certainMatch; k++)
        best = Math.max(best, step(pi + 1, k)) as MatchResult;
      return best;
    }
    const arg = args[ai];
    if (!arg) return noMatch;
    if (!arg.dynamic && !arg.glob) return wordMatches(word, arg.value) ? step(pi + 1, ai + 1) : noMatch;
    if (!arg.splittable) {
      if (word.kind === 'glob' && word.all) return step(pi + 1, ai + 1);
      return mayMatchWord(word, arg) ? (Math.min(maybeMatch, step(pi + 1, ai + 1)) as MatchResult) : noMatch;
    }
    // may become no word at all, or several
    let best = Math.min(maybeMatch, step(pi, ai + 1)) as MatchResult;
    for (let k = pi; k < words.length && best < maybeMatch; k++) {
      const consumed = words[k];
      if (!consumed || consumed.kind === 'rest' || !mayMatchWord(consumed, arg)) break;
      best = Math.max(best, Math.min(maybeMatch, step(k + 1, ai + 1))) as MatchResult;
    }
    return best;
  };
  return Math.min(programResult, step(0, 1)) as MatchResult;
}

/**
 * Known words (nothing dynamic) against a pattern with rests anywhere (`git ** log *`): wildcard matching with
 * one backtrack point, no allocation. Undefined when a word is dynamic.
 */
function knownWordsMatch(words: PatternWord[], args: readonly Arg[]): MatchResult | undefined {
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as Arg;
    if (arg.dynamic || arg.glob) return undefined;
  }
  let pi = 0;
  let ai = 1;
  let starPi = -1;
  let starAi = 0;
  while (ai < args.length) {
    const word = words[pi];
    if (word && word.kind === 'rest') {
      starPi = pi++;
      starAi = ai;
    } else if (word && wordMatches(word, (args[ai] as Arg).value)) {
      pi++;
      ai++;
    } else if (starPi >= 0) {
      pi = starPi + 1;
      ai = ++starAi;
    } else return noMatch;
  }
  while (words[pi]?.kind === 'rest') pi++;
  return pi === words.length ? certainMatch : noMatch;
}

/** The common case without backtracking: known words, and a rest only at the end. Undefined when it does not apply. */
function simpleMatch(words: PatternWord[], args: readonly Arg[]): MatchResult | undefined {
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as Arg;
    if (arg.dynamic || arg.glob) return undefined;
  }
  for (let pi = 0; pi < words.length; pi++) {
    const word = words[pi] as PatternWord;
    if (word.kind === 'rest') return pi === words.length - 1 ? certainMatch : undefined;
    const arg = args[pi + 1];
    if (!arg || !wordMatches(word, arg.value)) return noMatch;
  }
  return args.length === words.length + 1 ? certainMatch : noMatch;
}
