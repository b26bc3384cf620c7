import type { Arg } from './types';

/**
 * The read-only contract of an allow entry in a built-in rule set: the options (an explicit allowlist, never a
 * blocklist) and operands under which the program only reads. A command the entry's pattern matches but its
 * contract refuses is not allowed by that entry (matching goes on with the next rule, then the default).
 */
export interface OptionContract {
  /** Short options without a value; they may be clustered (`-la`). */
  flags?: string;
  /** Short options that take a value, attached (`-n5`) or as the next word (`-n 5`). */
  valued?: string;
  /** Short options whose value, if any, is attached (`-L` or `-Lalways`). */
  optional?: string;
  /** Long options without a value (exact names: an abbreviation not listed is refused). */
  long?: string;
  /** Long options with a value: `--name=value` or `--name value`; `name:2` takes two words (`jq --arg k v`). */
  longValued?: string;
  /** Long options whose value, if any, follows `=` (`--color`, `--color=never`). */
  longOptional?: string;
  /** Options written with one dash and a whole name (`find -name`, `xxd -ps`, `terraform -var`): read as long. */
  singleDashLong?: boolean;
  /** `-5` (head, tail, nice). */
  numbers?: boolean;
  /** `NAME=value` words before the operands (`env`): the opaque layer judges which names matter. */
  assignments?: boolean;
  /** The first operand starts the inner command (wrappers: `xargs`, `env`, `timeout 5`): stop checking there. */
  inner?: boolean;
  /** How many operands come before the inner command (`timeout DURATION`). */
  leading?: number;
  /** At most this many operands (`uniq IN`, not `uniq IN OUT`; `hostname`, not `hostname NAME`). */
  maxOperands?: number;
  /** Operands are allowed only with one of these options (`git branch --list PATTERN`, not `git branch NAME`). */
  operandsNeed?: readonly string[];
  /** Each literal operand must match (`date +FORMAT`, never `date MMDDhhmm`). */
  operand?: RegExp;
  /** Option values that must match, by option name (`journalctl -o json`). */
  values?: Record<string, RegExp>;
  /** At least one of these options must be given (`tar -t`, `crontab -l`). */
  requires?: readonly string[];
  /** Option → options one of which must come with it (`tar -x` only with `-O`). */
  needs?: Record<string, readonly string[]>;
  /**
   * Audited: every option this program has, listed here or not, only reads, so a word known only at run time
   * (`"$f"`, a glob, xargs input) may stand where an option could. Without it such a word is refused.
   */
  everyOptionReadOnly?: boolean;
  /** Words after the program that must come first, with `global` options before and between them (`git ** log`). */
  subcommand?: readonly string[];
  /** Options allowed before the subcommand words. */
  global?: OptionContract;
  /** For programs whose syntax is not getopt: returns why the words are refused. */
  check?: (args: readonly Arg[], start: number) => string | undefined;
  /** Every argument is fine: the program has no options that write or run (`echo`, `true`, `test`). Why. */
  anyArguments?: string;
}

interface Compiled {
  flags: Set<string>;
  valued: Set<string>;
  optional: Set<string>;
  long: Set<string>;
  longValued: Map<string, number>;
  longOptional: Set<string>;
}

const compiledCache = new WeakMap<OptionContract, Compiled>();

function split(text: string | undefined): string[] {
  return text ? text.split(/\s+/).filter(Boolean) : [];
}

function compiled(contract: OptionContract): Compiled {
  let c = compiledCache.get(contract);
  if (!c) {
    c = {
      flags: new Set(contract.flags ?? ''),
      valued: new Set(contract.valued ?? ''),
      optional: new Set(contract.optional ?? ''),
      long: new Set(split(contract.long)),
      longValued: new Map(
        split(contract.longValued).map((entry) => {
          const [name, count] = entry.split(':');
          return [name as string, Number(count ?? 1)];
        }),
      ),
      longOptional: new Set(split(contract.longOptional)),
    };
    compiledCache.set(contract, c);
  }
  return c;
}

/**
 * Whether a word known only at run time could start with `-` (an option): `"$f"`, `$x`, `*.log`, xargs input.
 * A word whose first character is literal and not `-` (`src/*.ts`, `./"$f"`) cannot.
 */
export function mayBeOption(arg: Arg): boolean {
  if (!arg.dynamic && !arg.glob) return arg.value.startsWith('-');
  const first = arg.segments.find((seg) => !('lit' in seg) || seg.lit !== '');
  if (!first || !('lit' in first)) return true;
  const ch = first.lit[0] as string;
  if (ch === '-') return true;
  if (!first.quoted && (ch === '*' || ch === '?' || ch === '[')) return true;
  return false;
}

const assignmentWord = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Checks the words from `start` against a contract; returns why they are refused, or undefined. */
export function checkContract(contract: OptionContract, args: readonly Arg[], start = 1): string | undefined {
  if (contract.anyArguments) return undefined;
  let i = start;
  if (contract.subcommand) {
    const global = contract.global ?? {};
    for (const word of contract.subcommand) {
      const at = scanOptions(global, args, i);
      if (typeof at === 'string') return at;
      const arg = args[at];
      if (!arg || arg.dynamic || arg.glob || arg.value !== word) return `the subcommand is not ${word}`;
      i = at + 1;
    }
  }
  if (contract.check) return contract.check(args, i);
  return checkOptions(contract, args, i);
}

/** Reads options from `start` until the first operand; returns its index or why an option is refused. */
function scanOptions(contract: OptionContract, args: readonly Arg[], start: number): number | string {
  const state = newState();
  for (let i = start; i < args.length; ) {
    const arg = args[i] as Arg;
    if (!mayBeOption(arg) || arg.dynamic || arg.glob) {
      if (mayBeOption(arg)) return `${arg.display} may be an option`;
      return i;
    }
    if (arg.value === '--') return i + 1;
    const next = readOption(contract, args, i, state);
    if (typeof next === 'string') return next;
    i = next;
  }
  return args.length;
}

interface State {
  seen: Set<string>;
}

function newState(): State {
  return { seen: new Set() };
}

/** Reads the option word at `i`; returns the index after it (and its values) or why it is refused. */
function readOption(contract: OptionContract, args: readonly Arg[], i: number, state: State): number | string {
  const c = compiled(contract);
  const arg = args[i] as Arg;
  const value = arg.value;
  const valueOk = (name: string, v: Arg | undefined): string | undefined => {
    if (!v) return `-${name.length > 1 ? '-' : ''}${name} needs a value`;
    const test = contract.values?.[name];
    if (test && (v.dynamic || v.glob || !test.test(v.value))) return `${v.display} is not allowed for ${name}`;
    return undefined;
  };
  const long = (name: string, inline: string | undefined): number | string => {
    state.seen.add(name);
    if (inline === undefined && c.long.has(name)) return i + 1;
    if (c.longOptional.has(name)) {
      if (inline === undefined) return i + 1;
      const problem = valueOk(name, { ...arg, value: inline });
      return problem ?? i + 1;
    }
    const count = c.longValued.get(name);
    if (count !== undefined) {
      if (inline !== undefined) return valueOk(name, { ...arg, value: inline }) ?? i + 1 + (count - 1);
      const problem = valueOk(name, args[i + 1]);
      if (problem) return problem;
      if (i + count >= args.length + 0 && count > 1 && !args[i + count]) return `${name} needs ${count} values`;
      return i + 1 + count;
    }
    return `the option ${arg.display} is not one that keeps ${args[0]?.display ?? 'it'} read-only`;
  };
  if (value.startsWith('--')) {
    const eq = value.indexOf('=');
    return long(value.slice(2, eq < 0 ? undefined : eq), eq < 0 ? undefined : value.slice(eq + 1));
  }
  if (contract.singleDashLong && value.length > 2) {
    const eq = value.indexOf('=');
    const name = value.slice(1, eq < 0 ? undefined : eq);
    if (c.long.has(name) || c.longValued.has(name) || c.longOptional.has(name)) {
      return long(name, eq < 0 ? undefined : value.slice(eq + 1));
    }
  }
  if (contract.numbers && /^-\d+$/.test(value)) return i + 1;
  for (let j = 1; j < value.length; j++) {
    const letter = value[j] as string;
    state.seen.add(letter);
    if (c.flags.has(letter)) continue;
    if (c.optional.has(letter)) {
      const attached = value.slice(j + 1);
      if (attached) return valueOk(letter, { ...arg, value: attached }) ?? i + 1;
      return i + 1;
    }
    if (c.valued.has(letter)) {
      const attached = value.slice(j + 1);
      if (attached) return valueOk(letter, { ...arg, value: attached }) ?? i + 1;
      return valueOk(letter, args[i + 1]) ?? i + 2;
    }
    if (contract.numbers && /\d/.test(letter)) continue;
    return `the option -${letter} (in ${arg.display}) is not one that keeps ${args[0]?.display ?? 'it'} read-only`;
  }
  return i + 1;
}

export function checkOptions(contract: OptionContract, args: readonly Arg[], start: number): string | undefined {
  const state = newState();
  let operands = 0;
  let unknownCount = false;
  let endOfOptions = false;
  let leading = contract.leading ?? 0;
  for (let i = start; i < args.length; ) {
    const arg = args[i] as Arg;
    const unknown = arg.dynamic || arg.glob;
    if (!endOfOptions && unknown && mayBeOption(arg)) {
      if (!contract.everyOptionReadOnly) return `${arg.display} may be an option`;
      if (contract.inner && leading === 0) break;
      unknownCount = true;
      i++;
      continue;
    }
    if (!endOfOptions && !unknown && arg.value === '--') {
      endOfOptions = true;
      i++;
      continue;
    }
    // After `--` a word that looks like an option is an operand here; if the program took `--` as the value of
    // an option the table thinks is a flag, it is an option there: refused, unless every option only reads.
    if (endOfOptions && mayBeOption(arg) && !contract.everyOptionReadOnly && !contract.inner) {
      return `${arg.display} after -- may still be an option`;
    }
    const isOption = !endOfOptions && !unknown && arg.value.startsWith('-') && arg.value.length > 1;
    if (isOption) {
      const next = readOption(contract, args, i, state);
      if (typeof next === 'string') return next;
      i = next;
      continue;
    }
    if (contract.assignments && !unknown && operands === 0 && assignmentWord.test(arg.value)) {
      i++;
      continue;
    }
    // an operand
    if (contract.inner) {
      if (leading > 0) {
        leading--;
        i++;
        continue;
      }
      break;
    }
    if (unknown && arg.splittable) unknownCount = true;
    else operands++;
    if (contract.operand && (unknown || !contract.operand.test(arg.value))) {
      if (!(unknown && !arg.splittable && contract.operand.test(arg.value)))
        return `${arg.display} is not an operand that keeps ${args[0]?.display ?? 'it'} read-only`;
    }
    i++;
  }
  if (contract.maxOperands !== undefined && (operands > contract.maxOperands || (unknownCount && !contract.inner))) {
    return `more than ${contract.maxOperands} operands`;
  }
  if (
    contract.operandsNeed &&
    (operands > 0 || unknownCount) &&
    !contract.operandsNeed.some((n) => state.seen.has(n))
  ) {
    return `operands need ${contract.operandsNeed.map((name) => (name.length > 1 ? `--${name}` : `-${name}`)).join(' or ')}`;
  }
  if (contract.requires && !contract.requires.some((name) => state.seen.has(name))) {
    return `one of ${contract.requires.map((name) => (name.length > 1 ? `--${name}` : `-${name}`)).join(', ')} is needed`;
  }
  for (const [option, partners] of Object.entries(contract.needs ?? {})) {
    if (state.seen.has(option) && !partners.some((name) => state.seen.has(name))) {
      return `${option.length > 1 ? '--' : '-'}${option} is read-only only with ${partners.join(' or ')}`;
    }
  }
  return undefined;
}

/** An unknown option no program has: every contract but `anyArguments` must refuse it (checked at load). */
export const probeOption = '--letkite-unknown-option';
