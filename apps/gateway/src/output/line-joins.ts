/**
 * The text with its line breaks removed, and where each of its characters came from. Searching this finds a token
 * that a terminal or `fold` wrapped at any column, over any number of lines; the found range is then mapped back.
 */
export interface JoinedLines {
  readonly text: string;
  /** `toOriginal[i]` is the offset in the original text of `text[i]`. */
  readonly toOriginal: Uint32Array;
}

/** Returns null when the text has no line break, so callers skip the second search. */
export function joinLines(text: string): JoinedLines | null {
  if (text.indexOf('\n') < 0 && text.indexOf('\r') < 0) return null;
  const toOriginal = new Uint32Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 10 && c !== 13) toOriginal[n++] = i;
  }
  return { text: text.replace(/[\r\n]+/g, ''), toOriginal: toOriginal.subarray(0, n) };
}

/** The original range `[start, end)` of the joined range `[start, end)`; it includes the breaks inside it. */
export function toOriginalRange(joined: JoinedLines, start: number, end: number): [number, number] {
  return [joined.toOriginal[start]!, joined.toOriginal[end - 1]! + 1];
}

/** Whether the joined range crossed a line break in the original (only those are new; the rest were found already). */
export function crossesBreak(joined: JoinedLines, start: number, end: number): boolean {
  return joined.toOriginal[end - 1]! - joined.toOriginal[start]! !== end - 1 - start;
}
