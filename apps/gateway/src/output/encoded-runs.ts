import { type DerivedView, ViewBuilder } from './derived-views';

/**
 * Decoded views of the runs where a token would hide: URL-encoding (`%XX`, nested up to three times), hex (plain
 * runs such as `xxd -p`, dump lines such as `xxd`, `hexdump -C`, `od -t x1`, also little-endian words as `od -x`
 * prints them, `\xNN` and `0xNN,` lists) and base64 (standard and URL alphabet, wrapped lines joined).
 *
 * Decoded bytes are read one character each (Latin-1), so an ASCII token decodes to itself. Of decoded hex and
 * base64 only stretches of at least MIN_TEXT_STRETCH printable ASCII characters (tab and line breaks included) are
 * kept: secrets are text, and random bytes (digests, compressed data) then cost almost nothing to scan.
 */

const MAX_RUN_CHARS = 1 << 20;
/** Shortest stretch of decoded text that is scanned (`password=` is 9 characters, every token longer). */
export const MIN_TEXT_STRETCH = 8;

/**
 * Decoded bytes on their way into a view: only stretches of at least MIN_TEXT_STRETCH text characters get there
 * (each followed by a separator); the first bytes of a stretch wait until it is long enough.
 */
class TextFilter {
  private readonly pending = {
    values: new Uint8Array(MIN_TEXT_STRETCH),
    starts: new Int32Array(MIN_TEXT_STRETCH),
    ends: new Int32Array(MIN_TEXT_STRETCH),
  };
  private held = 0;
  private emitting = false;
  constructor(private readonly b: ViewBuilder) {}

  push(value: number, start: number, end: number): void {
    if (!isText(value)) {
      this.end();
      return;
    }
    if (this.emitting) {
      this.b.push(value, start, end);
      return;
    }
    this.pending.values[this.held] = value;
    this.pending.starts[this.held] = start;
    this.pending.ends[this.held] = end;
    this.held += 1;
    if (this.held === MIN_TEXT_STRETCH) {
      for (let k = 0; k < this.held; k++)
        this.b.push(this.pending.values[k]!, this.pending.starts[k]!, this.pending.ends[k]!);
      this.emitting = true;
    }
  }

  /** Ends the current stretch (a byte that is not text, or the end of a run). */
  end(): void {
    if (this.emitting) this.b.separate();
    this.emitting = false;
    this.held = 0;
  }
}

const isText = (v: number) => (v >= 32 && v < 127) || v === 9 || v === 10 || v === 13;
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const hexValue = (c: number) => (c <= 57 ? c - 48 : (c | 32) - 87);

/** A run being URL-decoded: its characters and, per character, the original range. */
interface Run {
  codes: Uint16Array;
  starts: Int32Array;
  ends: Int32Array;
  length: number;
}

function percentDecode(run: Run): Run | null {
  const out: Run = {
    codes: new Uint16Array(run.length),
    starts: new Int32Array(run.length),
    ends: new Int32Array(run.length),
    length: 0,
  };
  let changed = false;
  for (let i = 0; i < run.length; i++) {
    const h1 = i + 2 < run.length ? run.codes[i + 1]! : 0;
    const h2 = i + 2 < run.length ? run.codes[i + 2]! : 0;
    const n = out.length++;
    if (run.codes[i] === 37 && isHex(h1) && isHex(h2)) {
      out.codes[n] = hexValue(h1) * 16 + hexValue(h2);
      out.starts[n] = run.starts[i]!;
      out.ends[n] = run.ends[i + 2]!;
      i += 2;
      changed = true;
      continue;
    }
    out.codes[n] = run.codes[i]!;
    out.starts[n] = run.starts[i]!;
    out.ends[n] = run.ends[i]!;
  }
  return changed ? out : null;
}

const percentEscape = /%[0-9A-Fa-f]{2}/g;
const urlRunStop = /[\s"'<>`]/;

/** Every whitespace-delimited run holding a `%XX`, decoded (again while it still holds one, at most 3 times). */
export function percentView(text: string): DerivedView | null {
  if (!text.includes('%')) return null;
  const b = new ViewBuilder();
  let lastEnd = 0;
  percentEscape.lastIndex = 0;
  for (let m = percentEscape.exec(text); m !== null; m = percentEscape.exec(text)) {
    if (m.index < lastEnd) continue;
    let start = m.index;
    while (start > lastEnd && m.index - start < 4096 && !urlRunStop.test(text[start - 1]!)) start--;
    let end = m.index + 3;
    while (end < text.length && end - start < MAX_RUN_CHARS && !urlRunStop.test(text[end]!)) end++;
    lastEnd = end;
    percentEscape.lastIndex = end;
    const size = end - start;
    let run: Run = {
      codes: new Uint16Array(size),
      starts: new Int32Array(size),
      ends: new Int32Array(size),
      length: size,
    };
    for (let i = 0; i < size; i++) {
      run.codes[i] = text.charCodeAt(start + i);
      run.starts[i] = start + i;
      run.ends[i] = start + i + 1;
    }
    for (let depth = 0; depth < 3; depth++) {
      const decoded = percentDecode(run);
      if (decoded === null) break;
      run = decoded;
    }
    for (let i = 0; i < run.length; i++) b.push(run.codes[i]!, run.starts[i]!, run.ends[i]!);
    b.separate();
  }
  return b.build();
}

/**
 * Hex digits [from, to) of `text` as bytes, each mapped to its two digits, or for dump lines to the end of the line
 * (the text column beside the hex shows the same bytes). `swap` > 1 reads little-endian words of that many bytes.
 */
function pushHexBytes(out: TextFilter, text: string, from: number, to: number, lineEnd: number | null, swap: number) {
  const count = (to - from) >> 1;
  for (let k = 0; k < count; k++) {
    // Little-endian words: the k-th byte shown is byte (word end - 1 - k) of the data.
    const word = swap > 1 ? Math.floor(k / swap) * swap : k;
    const idx = swap > 1 ? word + (swap - 1 - (k - word)) : k;
    const at = from + 2 * (idx < count ? idx : k);
    out.push(hexValue(text.charCodeAt(at)) * 16 + hexValue(text.charCodeAt(at + 1)), at, lineEnd ?? at + 2);
  }
}

interface DumpLine {
  readonly groups: [number, number][];
  readonly width: number;
}

const dumpOffset = /[ \t]*(?:(?:0x)?[0-9A-Fa-f]{4,16}:?[ \t]+)?/y;

/** A hex dump line: an optional offset column, then two or more hex groups of one even width (2, 4 or 8). */
function parseDumpLine(text: string, start: number, end: number): DumpLine | null {
  dumpOffset.lastIndex = start;
  const offset = dumpOffset.exec(text);
  let pos = start + (offset?.[0].length ?? 0);
  const groups: [number, number][] = [];
  let width = 0;
  while (pos < end) {
    let g = pos;
    while (g < end && isHex(text.charCodeAt(g))) g++;
    const len = g - pos;
    const after = text.charCodeAt(g);
    const separated = g === end || after === 32 || after === 9;
    if (len === 0 || len % 2 !== 0 || len > 8 || !separated || (width !== 0 && len !== width)) break;
    width = len;
    groups.push([pos, g]);
    let next = g;
    while (next < end && next - g < 3 && (text.charCodeAt(next) === 32 || text.charCodeAt(next) === 9)) next++;
    if (next === g) break;
    pos = next;
  }
  return groups.length >= 2 ? { groups, width } : null;
}

const dumpTrigger = /[0-9A-Fa-f]{2}[ \t]{1,2}[0-9A-Fa-f]{2}/;

/** Lines of hex dumps, each block of consecutive dump lines read as one byte stream (and as little-endian words). */
function dumpViews(text: string): DerivedView[] {
  if (!dumpTrigger.test(text)) return [];
  const straight = new ViewBuilder();
  const swapped = new ViewBuilder();
  const block = new TextFilter(straight);
  const swapBlock = new TextFilter(swapped);
  const flush = () => {
    block.end();
    swapBlock.end();
  };
  let lineStart = 0;
  while (lineStart <= text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const contentEnd = lineEnd > lineStart && text.charCodeAt(lineEnd - 1) === 13 ? lineEnd - 1 : lineEnd;
    const line = contentEnd - lineStart >= 5 ? parseDumpLine(text, lineStart, contentEnd) : null;
    if (line === null) flush();
    else {
      for (const [from, to] of line.groups) {
        pushHexBytes(block, text, from, to, contentEnd, 1);
        if (line.width > 2) pushHexBytes(swapBlock, text, from, to, contentEnd, line.width / 2);
      }
    }
    lineStart = lineEnd + 1;
  }
  flush();
  return [straight.build(), swapped.build()].filter((v): v is DerivedView => v !== null);
}

const odEscapes: Record<string, number> = {
  '\\0': 0,
  '\\a': 7,
  '\\b': 8,
  '\\t': 9,
  '\\n': 10,
  '\\v': 11,
  '\\f': 12,
  '\\r': 13,
};
const odLine = /^(?:[0-7]{7}|[0-9a-f]{6,8}) (.{1,200})$/;

/**
 * The bytes of one `od` line after its offset: `od -c` (fields of 4: a character, an escape such as `\n`, or 3
 * octal digits), `od -b` (3-digit octal bytes) or plain `od` (6-digit octal 16-bit words, little-endian). Each byte
 * with the original range of its field; null when the line is none of these.
 */
function parseOdLine(rest: string, at: number): [number, number, number][] | null {
  const out: [number, number, number][] = [];
  if (/^\d{6}(?: \d{6}){0,7}$/.test(rest) && !/[89]/.test(rest)) {
    for (let i = 0; i < rest.length; i += 7) {
      const word = Number.parseInt(rest.slice(i, i + 6), 8);
      out.push([word & 255, at + i, at + i + 6], [word >> 8, at + i, at + i + 6]);
    }
    return out;
  }
  if (/^\d{3}(?: \d{3}){0,15}$/.test(rest) && !/[89]/.test(rest)) {
    for (let i = 0; i < rest.length; i += 4) out.push([Number.parseInt(rest.slice(i, i + 3), 8), at + i, at + i + 3]);
    return out;
  }
  // od -c: the offset's own space is the first column of the first field.
  const fields = ` ${rest}`;
  if (fields.length % 4 !== 0 || fields.length > 64) return null;
  for (let i = 0; i < fields.length; i += 4) {
    const field = fields.slice(i, i + 4);
    const value = field.trimStart();
    const start = at - 1 + i;
    if (value === '') out.push([32, start, start + 4]);
    else if (value.length === 1) out.push([value.charCodeAt(0), start, start + 4]);
    else if (odEscapes[value] !== undefined) out.push([odEscapes[value]!, start, start + 4]);
    else if (/^[0-7]{3}$/.test(value)) out.push([Number.parseInt(value, 8), start, start + 4]);
    else if (value === '**') continue;
    else return null;
  }
  return out;
}

/** `od` dumps (octal words, octal bytes, characters), consecutive lines read as one stream. */
function odView(text: string): DerivedView | null {
  if (!/^(?:[0-7]{7}|[0-9a-f]{6,8}) /m.test(text)) return null;
  const b = new ViewBuilder();
  const out = new TextFilter(b);
  let lineStart = 0;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const m = odLine.exec(text.slice(lineStart, lineEnd));
    const bytes = m ? parseOdLine(m[1]!, lineStart + m[0].length - m[1]!.length) : null;
    if (bytes === null) out.end();
    else for (const [value, from, to] of bytes) out.push(value, from, to);
    lineStart = lineEnd + 1;
  }
  out.end();
  return b.build();
}

// `\xNN` / `0xNN,` byte lists (`xxd -i`, printf, Python).
const escapedHexRun = /(?:(?:\\x|0x)[0-9A-Fa-f]{2}(?:,[ \t\r\n]{0,16})?){8,}/g;
const escapedHexByte = /(?:\\x|0x)([0-9A-Fa-f]{2})/g;

/** Where the line break at `pos` ends (after `\n` or `\r\n`), or -1 when there is none. */
function afterBreak(text: string, pos: number): number {
  if (text.charCodeAt(pos) === 10) return pos + 1;
  if (text.charCodeAt(pos) === 13 && text.charCodeAt(pos + 1) === 10) return pos + 2;
  return -1;
}

/**
 * Maximal runs of characters in `table`, at least `min` long; a run that ends its line continues on the next line
 * when `continues(length)` says it wrapped there. Calls `onRun` with the [start, end) pieces of each run. A plain
 * loop: a regex with a `{16,}` quantifier retries every position inside short words.
 */
function scanRuns(
  text: string,
  table: Uint8Array,
  min: number,
  continues: (pieceLength: number, end: number) => boolean,
  onRun: (pieces: [number, number][]) => void,
): void {
  let pieces: [number, number][] = [];
  let total = 0;
  let expected = -1;
  const finish = () => {
    if (pieces.length > 0 && total >= min) onRun(pieces);
    pieces = [];
    total = 0;
  };
  const n = text.length;
  let i = 0;
  for (;;) {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c < 128 && table[c] === 1) break;
      i++;
    }
    if (i >= n) break;
    const start = i;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c >= 128 || table[c] === 0) break;
      i++;
    }
    if (start !== expected) {
      finish();
      // Most runs are fragments of words: skip them without allocating anything.
      if (i - start < min) {
        expected = -1;
        continue;
      }
    }
    pieces.push([start, i]);
    total += i - start;
    const next = total < MAX_RUN_CHARS && continues(i - start, i) ? afterBreak(text, i) : -1;
    expected = next;
    if (next < 0) finish();
  }
  finish();
}

/**
 * A text byte (0x20–0x7e, tab, line breaks) is written with a first digit 0, 2–7: a run whose pieces all lack
 * MIN_TEXT_STRETCH / 2 such pairs in a row cannot decode to MIN_TEXT_STRETCH text bytes (`AAAA…`, most digests);
 * a stretch cut by a line wrap has at least half of it on one side.
 */
function hexMayHoldText(text: string, from: number, to: number): boolean {
  let inRow = 0;
  for (let p = from; p + 1 < to; p += 2) {
    const c = text.charCodeAt(p);
    inRow = c === 48 || (c >= 50 && c <= 55) ? inRow + 1 : 0;
    if (inRow >= MIN_TEXT_STRETCH / 2) return true;
  }
  return false;
}

const hexTable = new Uint8Array(128);
for (const c of '0123456789ABCDEFabcdef') hexTable[c.charCodeAt(0)] = 1;

/** Hex runs and hex dumps, decoded: one view per reading (plain runs and dumps, dumps of little-endian words). */
export function hexViews(text: string, cutAtStart = false): DerivedView[] {
  const b = new ViewBuilder();
  const run = new TextFilter(b);
  // Plain runs of 16 or more digits; `xxd -p` wraps them at 60, so a run filling its line goes on.
  scanRuns(
    text,
    hexTable,
    16,
    (length) => length >= 16 && length % 2 === 0,
    (pieces) => {
      // A run at the very start of text cut off before it may begin mid-pair: read it at both alignments.
      const shifts = cutAtStart && pieces[0]![0] === 0 ? [0, 1] : [0];
      for (const shift of shifts) {
        const shifted = pieces.map(([from, to], k): [number, number] => [k === 0 ? from + shift : from, to]);
        if (!shifted.some(([from, to]) => hexMayHoldText(text, from, to))) continue;
        for (const [from, to] of shifted) pushHexBytes(run, text, from, to - ((to - from) % 2), null, 1);
        run.end();
      }
    },
  );
  if (text.includes('\\x') || text.includes('0x')) {
    escapedHexRun.lastIndex = 0;
    for (let m = escapedHexRun.exec(text); m !== null; m = escapedHexRun.exec(text)) {
      escapedHexByte.lastIndex = 0;
      for (let e = escapedHexByte.exec(m[0]); e !== null; e = escapedHexByte.exec(m[0])) {
        const at = m.index + e.index;
        run.push(Number.parseInt(e[1]!, 16), at, at + e[0].length);
      }
      run.end();
    }
  }
  const plain = b.build();
  const od = odView(text);
  const views = [...dumpViews(text), ...(od ? [od] : [])];
  return plain ? [plain, ...views] : views;
}

const base64Table = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=') base64Table[c.charCodeAt(0)] = 1;
/** Shortest base64 run decoded: 15 bytes, shorter than any token and its key. */
const MIN_BASE64_RUN = 20;

/**
 * Base64 runs of at least 20 characters (wrapped lines joined: a line of a multiple of 4 goes on), decoded. Each
 * run is decoded natively (Node's decoder takes both alphabets), split at `=`, and only its text stretches are
 * mapped back, to the four characters that hold each byte.
 */
export function base64View(text: string, cutAtStart = false): DerivedView | null {
  const b = new ViewBuilder();
  scanRuns(
    text,
    base64Table,
    MIN_BASE64_RUN,
    (length, end) => length >= 16 && length % 4 === 0 && text.charCodeAt(end - 1) !== 61,
    (pieces) => {
      const joined =
        pieces.length === 1
          ? text.slice(pieces[0]![0], pieces[0]![1])
          : pieces.map(([f, t]) => text.slice(f, t)).join('');
      // Joined offset → original offset: the piece holding it, by binary search over where each piece starts.
      const joinedStarts = new Int32Array(pieces.length);
      for (let k = 1; k < pieces.length; k++) {
        joinedStarts[k] = joinedStarts[k - 1]! + pieces[k - 1]![1] - pieces[k - 1]![0];
      }
      const toOriginal = (j: number): number => {
        let lo = 0;
        let hi = pieces.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >>> 1;
          if (joinedStarts[mid]! <= j) lo = mid;
          else hi = mid - 1;
        }
        return pieces[lo]![0] + (j - joinedStarts[lo]!);
      };
      // A run at the very start of text cut off before it may begin mid-group: decode it at every alignment.
      const shifts = cutAtStart && pieces[0]![0] === 0 ? [0, 1, 2, 3] : [0];
      for (const shift of shifts) {
        let segmentStart = shift;
        while (segmentStart < joined.length) {
          let segmentEnd = joined.indexOf('=', segmentStart);
          if (segmentEnd < 0) segmentEnd = joined.length;
          if (segmentEnd - segmentStart >= 12 && mayHoldText(joined, segmentStart, segmentEnd)) {
            const bytes = Buffer.from(joined.slice(segmentStart, segmentEnd), 'base64');
            const from = segmentStart;
            pushTextStretches(b, bytes, (k) => {
              const first = from + Math.floor(k / 3) * 4;
              return [toOriginal(first), toOriginal(Math.min(first + 3, segmentEnd - 1)) + 1];
            });
          }
          segmentStart = segmentEnd + 1;
        }
      }
    },
  );
  return b.build();
}

// The first character of each 4-character group holds the top 6 bits of a byte: for text (0x20–0x7e, tab and line
// breaks) it is one of C, D, I–Z, a–f. Runs without three such groups in a row cannot decode to 8 text bytes.
const textQuadStart = new Uint8Array(128);
for (const c of 'CDIJKLMNOPQRSTUVWXYZabcdef') textQuadStart[c.charCodeAt(0)] = 1;

function mayHoldText(joined: string, from: number, to: number): boolean {
  let inRow = 0;
  for (let p = from; p < to; p += 4) {
    const c = joined.charCodeAt(p);
    inRow = c < 128 && textQuadStart[c] === 1 ? inRow + 1 : 0;
    if (inRow >= 3) return true;
  }
  return false;
}

/** Pushes each stretch of at least MIN_TEXT_STRETCH text bytes, mapped by `origin`, followed by a separator. */
function pushTextStretches(b: ViewBuilder, bytes: Uint8Array, origin: (k: number) => [number, number]): void {
  let k = 0;
  while (k < bytes.length) {
    while (k < bytes.length && !isText(bytes[k]!)) k++;
    const start = k;
    while (k < bytes.length && isText(bytes[k]!)) k++;
    if (k - start < MIN_TEXT_STRETCH) continue;
    for (let i = start; i < k; i++) {
      const [from, to] = origin(i);
      b.push(bytes[i]!, from, to);
    }
    b.separate();
  }
}
