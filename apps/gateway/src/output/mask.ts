import { applyMask, scanSecrets } from './scan';

export interface MaskOptions {
  /** The account's redaction patterns, compiled by `compileRedactionPatterns`. */
  readonly extraPatterns?: readonly RegExp[] | undefined;
}

export interface MaskedText {
  readonly text: string;
  /** How many secrets were replaced (overlapping or adjacent finds count once). */
  readonly masked_count: number;
}

/**
 * Replaces every known secret format, private key block and account pattern in the text with `***`, keeping the
 * key name around an assigned secret. Secrets wrapped across line breaks are found too (see README.md).
 */
export function maskSecrets(text: string, options: MaskOptions = {}): MaskedText {
  const { ranges } = scanSecrets(text, { extraPatterns: options.extraPatterns });
  if (ranges.length === 0) return { text, masked_count: 0 };
  return { text: applyMask(text, ranges).text, masked_count: ranges.length };
}
