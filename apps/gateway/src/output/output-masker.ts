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

function maskDeep(value: unknown, extraPatterns: readonly RegExp[]): unknown {
  if (typeof value === 'string') return maskSecrets(value, { extraPatterns }).text;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, extraPatterns));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskDeep(v, extraPatterns)]));
  }
  return value;
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
