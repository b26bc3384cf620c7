import { LetKiteError } from '@letkite/protocol';

/** Longest account redaction pattern accepted, in characters. */
export const MAX_REDACTION_PATTERN_LENGTH = 512;
/** Most account redaction patterns accepted. */
export const MAX_REDACTION_PATTERNS = 100;

// Every printable ASCII character, whitespace and a little Unicode: a pattern that can match the empty string
// almost always does so somewhere in here (`a*`, `^`, `\b`, `(?=x)`). The scanner also skips empty matches.
const emptyMatchProbe = `${Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('')}\n\t\r é€😀 aa 00 __`;

// A quantified group that itself contains a quantifier (`(a+)+`, `(\w*x)*`, `(a{2,})+`): the classic shape of
// exponential backtracking. Refused, since these run over every output of the account.
const nestedQuantifier = /\((?:[^()\\]|\\.)*(?:[*+]|\{\d+,?\d*\})(?:[^()\\]|\\.)*\)(?:[*+]|\{\d+,?\d*\})/;

function refuse(index: number, reason: string): LetKiteError {
  // The pattern itself is not quoted: it may spell out the very secret it is meant to hide.
  return new LetKiteError('invalid_params', `redaction pattern #${index + 1} ${reason}`, { index });
}

function matchesEmpty(re: RegExp): boolean {
  re.lastIndex = 0;
  for (let m = re.exec(emptyMatchProbe); m !== null; m = re.exec(emptyMatchProbe)) {
    if (m[0].length === 0) return true;
  }
  return false;
}

/**
 * Validates the account's redaction patterns (JavaScript regex source, no delimiters) and compiles them with the
 * global flag. Refuses, with `invalid_params`, a pattern that does not compile, is longer than
 * MAX_REDACTION_PATTERN_LENGTH, can match the empty string, or nests quantifiers.
 */
export function compileRedactionPatterns(patterns: readonly string[]): RegExp[] {
  if (patterns.length > MAX_REDACTION_PATTERNS) {
    throw new LetKiteError('invalid_params', `at most ${MAX_REDACTION_PATTERNS} redaction patterns are allowed`, {
      count: patterns.length,
    });
  }
  return patterns.map((source, index) => {
    if (source.length === 0) throw refuse(index, 'is empty');
    if (source.length > MAX_REDACTION_PATTERN_LENGTH) {
      throw refuse(index, `is longer than ${MAX_REDACTION_PATTERN_LENGTH} characters`);
    }
    let re: RegExp;
    try {
      re = new RegExp(source, 'g');
    } catch {
      throw refuse(index, 'is not a valid regular expression');
    }
    if (matchesEmpty(re)) throw refuse(index, 'can match the empty string');
    if (nestedQuantifier.test(source)) throw refuse(index, 'nests quantifiers, which can backtrack for ever');
    re.lastIndex = 0;
    return re;
  });
}
