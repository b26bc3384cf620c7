import type { Arg } from './types';

/** How a wrapper or tool takes its options, enough to find where its inner command or operands start. */
export interface OptionSpec {
  /** Short options that take a value, attached (`-uroot`) or as the next word (`-u root`). */
  short?: string;
  /** Short options whose value, if any, must be attached (`xargs -i{}`): the rest of the cluster. */
  optionalShort?: string;
  /** Long options that take a value as the next word when not given as `--name=value`. */
  long?: readonly string[];
  /** Positional words before the inner command (`timeout DURATION`, `chroot DIR`). */
  leading?: number;
  /** `NAME=value` words may stand before the inner command (`sudo`, `env`). */
  assignments?: boolean;
  /** Flags after which no command follows (`command -v`, `sudo -e`). */
  noCommand?: string;
  /** A lone `-` is an option (`env -`). */
  dashAlone?: boolean;
}

export interface ParsedOptions {
  /** Options as given: short ones by letter, long ones by name (without dashes). */
  options: Array<{ name: string; value?: Arg | undefined }>;
  assignments: Arg[];
  positionals: Arg[];
  /** Words from where the inner command or the operands begin. */
  rest: Arg[];
  /** A word with an expansion stood where options go: what follows cannot be known. */
  unknown: boolean;
  noCommand: boolean;
}

const assignmentPattern = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Parses getopt-style options up to the first operand (or after `leading` operands). */
export function parseOptions(args: readonly Arg[], spec: OptionSpec, start = 1): ParsedOptions {
  const parsed: ParsedOptions = {
    options: [],
    assignments: [],
    positionals: [],
    rest: [],
    unknown: false,
    noCommand: false,
  };
  let leading = spec.leading ?? 0;
  let i = start;
  while (i < args.length) {
    const arg = args[i] as Arg;
    const value = arg.value;
    if (arg.dynamic || arg.glob) {
      if (leading > 0 && !arg.splittable) {
        parsed.positionals.push(arg);
        leading--;
        i++;
        continue;
      }
      parsed.unknown = true;
      break;
    }
    if (value === '--') {
      i++;
      while (leading > 0 && i < args.length) {
        parsed.positionals.push(args[i++] as Arg);
        leading--;
      }
      break;
    }
    if (value === '-' && spec.dashAlone) {
      parsed.options.push({ name: '-' });
      i++;
      continue;
    }
    if (value.startsWith('--') && value.length > 2) {
      const eq = value.indexOf('=');
      const name = value.slice(2, eq < 0 ? undefined : eq);
      const takesValue = eq < 0 && longTakesValue(name, spec.long);
      const optionValue = eq >= 0 ? { ...arg, value: value.slice(eq + 1) } : takesValue ? args[i + 1] : undefined;
      parsed.options.push({ name: expandLong(name, spec.long), value: optionValue });
      i += takesValue ? 2 : 1;
      continue;
    }
    if (value.startsWith('-') && value.length > 1) {
      let consumedNext = false;
      for (let j = 1; j < value.length; j++) {
        const letter = value[j] as string;
        if (spec.short?.includes(letter)) {
          const attached = value.slice(j + 1);
          const optionValue = attached ? { ...arg, value: attached, display: attached } : args[i + 1];
          parsed.options.push({ name: letter, value: optionValue });
          consumedNext = !attached;
          break;
        }
        if (spec.optionalShort?.includes(letter)) {
          const attached = value.slice(j + 1);
          parsed.options.push({ name: letter, value: attached ? { ...arg, value: attached } : undefined });
          break;
        }
        parsed.options.push({ name: letter });
        if (spec.noCommand?.includes(letter)) parsed.noCommand = true;
      }
      i += consumedNext ? 2 : 1;
      continue;
    }
    if (spec.assignments && assignmentPattern.test(value)) {
      parsed.assignments.push(arg);
      i++;
      continue;
    }
    if (leading > 0) {
      parsed.positionals.push(arg);
      leading--;
      i++;
      continue;
    }
    break;
  }
  parsed.rest = args.slice(i);
  return parsed;
}

/** getopt_long accepts any unambiguous prefix of a long option. */
function longTakesValue(name: string, long: readonly string[] | undefined): boolean {
  if (!long) return false;
  if (long.includes(name)) return true;
  const candidates = long.filter((option) => option.startsWith(name));
  return candidates.length === 1 && name.length >= 2;
}

function expandLong(name: string, long: readonly string[] | undefined): string {
  if (!long || long.includes(name)) return name;
  const candidates = long.filter((option) => option.startsWith(name));
  return candidates.length === 1 && name.length >= 2 ? (candidates[0] as string) : name;
}

export function hasOption(parsed: ParsedOptions, ...names: string[]): boolean {
  return parsed.options.some((option) => names.includes(option.name));
}

export function optionValue(parsed: ParsedOptions, ...names: string[]): Arg | undefined {
  return parsed.options.find((option) => names.includes(option.name) && option.value)?.value;
}
