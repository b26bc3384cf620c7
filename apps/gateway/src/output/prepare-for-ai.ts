import { capOutput, type OutputLimits, parseOutputLimits } from './cap';
import { maskSecrets } from './mask';
import { applyMask, maskedOffset, scanSecrets } from './scan';

/**
 * Text before the kept tail that is masked too, so a secret cut by the window is recognised. It exceeds every
 * bounded format (the longest, a JWT, is under 17 000 characters, even wrapped at a narrow column); private key
 * blocks are paired from their END line.
 */
export const PREPARE_MARGIN_CHARS = 65_536;

export interface PrepareOptions extends OutputLimits {
  /** The account's redaction patterns, compiled by `compileRedactionPatterns`. */
  readonly extraPatterns?: readonly RegExp[] | undefined;
}

export interface PreparedOutput {
  readonly text: string;
  readonly truncated: boolean;
  /** Secrets masked in the returned text. */
  readonly masked_count: number;
}

interface Limits {
  readonly maxLines: number;
  readonly maxChars: number;
}

/**
 * Masks from `windowStart` on, then caps. Returns null when the kept tail reaches into the margin, where a secret
 * cut by the window might be only partly recognised.
 */
function maskThenCap(
  text: string,
  windowStart: number,
  limits: Limits,
  extraPatterns: readonly RegExp[] | undefined,
): PreparedOutput | null {
  const window = windowStart === 0 ? text : text.slice(windowStart);
  const { ranges } = scanSecrets(window, { extraPatterns, cutAtStart: windowStart > 0 });
  const masked = applyMask(window, ranges);
  const capped = capOutput(masked.text, limits);
  const keptFrom = masked.text.length - capped.text.length;
  if (windowStart > 0 && keptFrom < maskedOffset(window, ranges, PREPARE_MARGIN_CHARS)) return null;
  // Cutting can turn harmless text into something token-shaped at the new start; mask once more so the result is a
  // fixed point of maskSecrets.
  const again = maskSecrets(capped.text, { extraPatterns });
  return {
    text: again.text,
    truncated: capped.truncated || windowStart > 0,
    masked_count: masked.maskEnds.filter((end) => end > keptFrom).length + again.masked_count,
  };
}

/**
 * Makes output safe and small enough for an AI: masks secrets first (so the cap can only cut through `***`, never
 * through half a secret), then keeps the newest lines. Only a tail window (the limit plus a margin) is scanned
 * when the text is long; when masking shrank that window so much that the margin would be shown, the whole text is
 * masked instead.
 */
export function prepareForAi(text: string, options: PrepareOptions = {}): PreparedOutput {
  const limits = parseOutputLimits({ maxLines: options.maxLines, maxChars: options.maxChars });
  const windowChars = limits.maxChars + PREPARE_MARGIN_CHARS;
  if (text.length > windowChars) {
    const fast = maskThenCap(text, text.length - windowChars, limits, options.extraPatterns);
    if (fast !== null) return fast;
  }
  return maskThenCap(text, 0, limits, options.extraPatterns)!;
}
