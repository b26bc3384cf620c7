import { crossesBreak, type JoinedLines, toOriginalRange } from './line-joins';

/**
 * Private key blocks (PEM, OpenSSH, PGP, SSH2): a BEGIN marker is paired with the END marker after it when only key
 * lines lie between them. A BEGIN with no END (output cut off, a page boundary) masks the key lines that follow
 * it, and an END with no BEGIN masks the key lines before it, so half a block is never shown either.
 */
const marker = /-{4,5} ?(BEGIN|END) (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)? ?-{4,5}/g;

export interface KeyMarker {
  readonly start: number;
  readonly end: number;
  readonly kind: 'begin' | 'end';
}

export interface KeyBlock {
  readonly start: number;
  readonly end: number;
}

/** Markers in the text, plus markers split across lines (found in the joined text). Sorted, not overlapping. */
export function findKeyMarkers(text: string, joined: JoinedLines | null): KeyMarker[] {
  const found: KeyMarker[] = [];
  for (const m of text.matchAll(marker)) {
    found.push({ start: m.index, end: m.index + m[0].length, kind: m[1] === 'BEGIN' ? 'begin' : 'end' });
  }
  if (joined !== null) {
    for (const m of joined.text.matchAll(marker)) {
      const end = m.index + m[0].length;
      if (!crossesBreak(joined, m.index, end)) continue;
      const [s, e] = toOriginalRange(joined, m.index, end);
      found.push({ start: s, end: e, kind: m[1] === 'BEGIN' ? 'begin' : 'end' });
    }
    found.sort((a, b) => a.start - b.start);
  }
  // A marker split inside its dashes is found twice (four dashes on one line, five across the break): keep one
  // marker covering both.
  const markers: KeyMarker[] = [];
  for (const m of found) {
    const last = markers.at(-1);
    if (last === undefined || m.start >= last.end) markers.push(m);
    else if (m.end > last.end) markers[markers.length - 1] = { ...last, end: m.end };
  }
  return markers;
}

/** Base64 lines, `Header: value` lines (Proc-Type, DEK-Info, Comment, Version) and blank lines. */
function isKeyLine(line: string): boolean {
  const t = line.trim();
  return /^[A-Za-z0-9+/=]*$/.test(t) || /^[A-Za-z][A-Za-z0-9-]*: /.test(t);
}

function lineStartOf(text: string, pos: number): number {
  return pos === 0 ? 0 : text.lastIndexOf('\n', pos - 1) + 1;
}

function contentEnd(text: string, newline: number): number {
  return newline > 0 && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
}

interface Walk {
  /** End of the last non-blank key line included. */
  readonly end: number;
  /** Start of the first line not included (text.length when every line to the end is a key line). */
  readonly stoppedAt: number;
}

/** From inside a BEGIN line: the rest of that line (a JSON string may hold the whole key), then key lines. */
function walkForward(text: string, from: number): Walk {
  let nl = text.indexOf('\n', from);
  if (nl < 0) return { end: text.length, stoppedAt: text.length };
  let end = contentEnd(text, nl);
  for (;;) {
    const lineStart = nl + 1;
    if (lineStart >= text.length) return { end: text.length, stoppedAt: text.length };
    nl = text.indexOf('\n', lineStart);
    const lineEnd = nl < 0 ? text.length : contentEnd(text, nl);
    const line = text.slice(lineStart, lineEnd);
    if (!isKeyLine(line)) return { end, stoppedAt: lineStart };
    if (line.trim() !== '') end = lineEnd;
    if (nl < 0) return { end: text.length, stoppedAt: text.length };
  }
}

/** From an END marker back over non-blank key lines; returns where the masked range starts. */
function walkBack(text: string, endMarker: number): number {
  let start = lineStartOf(text, endMarker);
  while (start > 0) {
    const newline = start - 1;
    const lineStart = lineStartOf(text, newline);
    const line = text.slice(lineStart, contentEnd(text, newline));
    if (line.trim() === '' || !isKeyLine(line)) break;
    start = lineStart;
  }
  return start;
}

/**
 * Pairs markers into blocks. `startsInside` says the text continues a block whose BEGIN was already consumed (the
 * stream masker); `openAtEnd` says the last block may go on past the end of the text.
 */
export function findKeyBlocks(
  text: string,
  markers: readonly KeyMarker[],
  startsInside: boolean,
): { blocks: KeyBlock[]; openAtEnd: boolean } {
  const blocks: KeyBlock[] = [];
  let openStart: number | null = startsInside ? 0 : null;
  let bodyFrom = 0;
  for (const m of markers) {
    if (m.kind === 'begin') {
      if (openStart === null) {
        openStart = m.start;
        bodyFrom = m.end;
      }
      continue;
    }
    if (openStart !== null) {
      const walk = walkForward(text, bodyFrom);
      if (walk.stoppedAt >= lineStartOf(text, m.start)) {
        blocks.push({ start: openStart, end: m.end });
        openStart = null;
        continue;
      }
      blocks.push({ start: openStart, end: walk.end });
      openStart = null;
    }
    blocks.push({ start: walkBack(text, m.start), end: m.end });
  }
  if (openStart === null) return { blocks, openAtEnd: false };
  const walk = walkForward(text, bodyFrom);
  const openAtEnd = walk.stoppedAt >= text.length;
  blocks.push({ start: openStart, end: openAtEnd ? text.length : walk.end });
  return { blocks, openAtEnd };
}
