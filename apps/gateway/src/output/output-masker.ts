import type { OutputLimits } from './cap';
import { type MaskedText, maskSecrets } from './mask';
import { maskWindow } from './mask-window';
import { type PreparedOutput, prepareForAi } from './prepare-for-ai';
import { compileRedactionPatterns } from './redaction-patterns';

/** Masking bound to one account's redaction patterns: what every output path and the audit log use. */
export interface OutputMasker {
  readonly extraPatterns: readonly RegExp[];
  mask(text: string): MaskedText;
  prepare(text: string, limits?: OutputLimits): PreparedOutput;
  /** See `maskWindow`; `cutAtStart`: the text itself was cut off before its start (the margin did not reach it). */
  window(text: string, from: number, to: number, options?: { cutAtStart?: boolean }): MaskedText;
  /** A copy of a JSON-like value with every string in it masked (object keys stay): audit details. */
  maskValue<T>(value: T): T;
}

const compiled = new Map<string, RegExp[]>();
const MAX_CACHED_PATTERN_SETS = 256;

function compileCached(patterns: readonly string[]): RegExp[] {
  const key = JSON.stringify(patterns);
  let res = compiled.get(key);
  if (res === undefined) {
    res = compileRedactionPatterns(patterns);
    if (compiled.size >= MAX_CACHED_PATTERN_SETS) compiled.delete(compiled.keys().next().value as string);
    compiled.set(key, res);
  }
  return res;
}

/** Between strings masked together: a line of its own holding a private-use character no rule matches. */
const SEPARATOR = '\n\uE000\n';

/** Every string in a JSON-like value, in order of a depth-first walk. */
function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) collectStrings(v, out);
}

function replaceStrings(value: unknown, next: () => string): unknown {
  if (typeof value === 'string') return next();
  if (Array.isArray(value)) return value.map((v) => replaceStrings(v, next));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceStrings(v, next)]));
  }
  return value;
}

/**
 * Masks every string of a value. Many strings (a directory listing) are masked as one text, one per line between
 * separators, which is much faster than one scan each; when a secret reaches across a separator (the parts no
 * longer line up) each string is masked alone.
 */
function maskDeep(value: unknown, extraPatterns: readonly RegExp[]): unknown {
  const strings: string[] = [];
  collectStrings(value, strings);
  let masked: string[] | null = null;
  if (strings.length > 8 && !strings.some((s) => s.includes('\uE000'))) {
    const parts = maskSecrets(strings.join(SEPARATOR), { extraPatterns }).text.split(SEPARATOR);
    if (parts.length === strings.length) masked = parts;
  }
  masked ??= strings.map((s) => maskSecrets(s, { extraPatterns }).text);
  let i = 0;
  return replaceStrings(value, () => masked[i++] as string);
}

/**
 * The masker for an account's redaction patterns (as stored: regex sources, validated when they were set). The
 * compiled patterns are cached by their sources, so a tool call does not compile them again.
 */
export function createOutputMasker(patterns: readonly string[] = []): OutputMasker {
  const extraPatterns = patterns.length === 0 ? [] : compileCached(patterns);
  return {
    extraPatterns,
    mask: (text) => maskSecrets(text, { extraPatterns }),
    prepare: (text, limits = {}) => prepareForAi(text, { ...limits, extraPatterns }),
    window: (text, from, to, options = {}) => maskWindow(text, from, to, { ...options, extraPatterns }),
    maskValue: (value) => maskDeep(value, extraPatterns) as typeof value,
  };
}
