import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';

/** Most lines of output handed to an AI (DESIGN §7). */
export const DEFAULT_MAX_LINES = 2000;
/** Most UTF-16 characters of output handed to an AI (DESIGN §7). */
export const DEFAULT_MAX_CHARS = 64_000;

/** Caps for AI output; both default to the DESIGN values. */
export const OutputLimits = z.object({
  maxLines: z.number().int().min(1).default(DEFAULT_MAX_LINES),
  maxChars: z.number().int().min(1).default(DEFAULT_MAX_CHARS),
});
export type OutputLimits = z.input<typeof OutputLimits>;

export interface CappedText {
  readonly text: string;
  /** Something at the start was dropped. */
  readonly truncated: boolean;
}

/** Parses limits, refusing bad ones with `invalid_params`. */
export function parseOutputLimits(limits: OutputLimits): z.output<typeof OutputLimits> {
  const parsed = OutputLimits.safeParse(limits);
  if (!parsed.success) {
    throw new LetKiteError('invalid_params', `invalid output limits: ${z.prettifyError(parsed.error)}`, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

/** Start of the last `maxLines` lines; a final newline does not open another line. */
function startOfLastLines(text: string, maxLines: number): number {
  let pos = text.endsWith('\n') ? text.length - 1 : text.length;
  for (let i = 0; i < maxLines; i++) {
    if (pos === 0) return 0;
    const newline = text.lastIndexOf('\n', pos - 1);
    if (newline < 0) return 0;
    pos = newline;
  }
  return pos + 1;
}

/**
 * Start of the last `maxChars` characters, moved on to the next line start when the partial line it drops is less
 * than half the budget (a single huge line is cut inside instead), and never between the halves of a surrogate pair.
 */
function startOfLastChars(text: string, maxChars: number): number {
  let start = text.length - maxChars;
  if (start <= 0) return 0;
  if (text.charCodeAt(start - 1) === 10) return start;
  const newline = text.indexOf('\n', start);
  if (newline >= 0 && newline + 1 < text.length && newline + 1 - start < maxChars / 2) return newline + 1;
  const code = text.charCodeAt(start);
  if (code >= 0xdc00 && code <= 0xdfff) start += 1;
  return start;
}

/** Keeps the newest part of the text (its tail) within the line and character limits. */
export function capOutput(text: string, limits: OutputLimits = {}): CappedText {
  const { maxLines, maxChars } = parseOutputLimits(limits);
  const start = Math.max(startOfLastLines(text, maxLines), startOfLastChars(text, maxChars));
  return start === 0 ? { text, truncated: false } : { text: text.slice(start), truncated: true };
}
