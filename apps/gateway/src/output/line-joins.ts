/**
 * The text with its line breaks removed, and where each of its characters came from. Searching this finds a token
 * that a terminal or `fold` wrapped at any column, over any number of lines; the found range is then mapped back.
 */
export interface JoinedLines {
  readonly text: string;
  /** Per line (runs of break characters removed), where it starts in the joined text and in the original. */
  readonly joinedStarts: Int32Array;
  readonly originalStarts: Int32Array;
}

/** Returns null when the text has no line break, so callers skip the second search. */
export function joinLines(text: string): JoinedLines | null {
  if (text.indexOf('\n') < 0 && text.indexOf('\r') < 0) return null;
  const joinedStarts: number[] = [];
  const originalStarts: number[] = [];
  let joinedPos = 0;
  let pos = 0;
  for (const m of text.matchAll(/[\r\n]+/g)) {
    joinedStarts.push(joinedPos);
    originalStarts.push(pos);
    joinedPos += m.index - pos;
    pos = m.index + m[0].length;
  }
  joinedStarts.push(joinedPos);
  originalStarts.push(pos);
  return {
    text: text.replace(/[\r\n]+/g, ''),
    joinedStarts: Int32Array.from(joinedStarts),
    originalStarts: Int32Array.from(originalStarts),
  };
}

/** The line holding joined offset `j`: the last line starting at or before it (empty lines share a start). */
function lineOf(joined: JoinedLines, j: number): number {
  const starts = joined.joinedStarts;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= j) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function toOriginal(joined: JoinedLines, j: number): number {
  const line = lineOf(joined, j);
  return joined.originalStarts[line]! + (j - joined.joinedStarts[line]!);
}

/** The original range of the joined range `[start, end)`; it includes the breaks inside it. */
export function toOriginalRange(joined: JoinedLines, start: number, end: number): [number, number] {
  return [toOriginal(joined, start), toOriginal(joined, end - 1) + 1];
}

/** Whether the joined range crossed a line break in the original (only those are new; the rest were found already). */
export function crossesBreak(joined: JoinedLines, start: number, end: number): boolean {
  return lineOf(joined, start) !== lineOf(joined, end - 1);
}
