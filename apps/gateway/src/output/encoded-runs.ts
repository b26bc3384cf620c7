import { type DerivedView, ViewBuilder } from './derived-views';

/**
 * Decoded views of the runs where a token would hide: URL-encoding (`%XX`, nested up to three times), hex (plain
 * runs such as `xxd -p`, dump lines such as `xxd`, `hexdump -C`, `od -t x1`, also little-endian words as `od -x`
 * prints them, `\xNN` and `0xNN,` lists) and base64 (standard and URL alphabet, wrapped lines joined). Bytes are
 * read as Latin-1, one character each, so an ASCII token decodes to itself whatever surrounds it.
 */

const MAX_RUN_CHARS = 1 << 20;

/** A run being decoded: its characters and, per character, the original range. */
interface Run {
  chars: string[];
  starts: number[];
  ends: number[];
}

function pushRun(b: ViewBuilder, run: Run): void {
  for (let i = 0; i < run.chars.length; i++) b.push(run.chars[i]!, run.starts[i]!, run.ends[i]!);
  b.separate();
}

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const hexValue = (c: number) => (c <= 57 ? c - 48 : (c | 32) - 87);

function percentDecode(run: Run): Run | null {
  const out: Run = { chars: [], starts: [], ends: [] };
  let changed = false;
  for (let i = 0; i < run.chars.length; i++) {
    const c = run.chars[i]!;
    const h1 = run.chars[i + 1]?.charCodeAt(0) ?? 0;
    const h2 = run.chars[i + 2]?.charCodeAt(0) ?? 0;
    if (c === '%' && isHex(h1) && isHex(h2)) {
      out.chars.push(String.fromCharCode(hexValue(h1) * 16 + hexValue(h2)));
      out.starts.push(run.starts[i]!);
      out.ends.push(run.ends[i + 2]!);
      i += 2;
      changed = true;
      continue;
    }
    out.chars.push(c);
    out.starts.push(run.starts[i]!);
    out.ends.push(run.ends[i]!);
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
    let run: Run = { chars: [], starts: [], ends: [] };
    for (let i = start; i < end; i++) {
      run.chars.push(text[i]!);
      run.starts.push(i);
      run.ends.push(i + 1);
    }
    for (let depth = 0; depth < 3; depth++) {
      const decoded = percentDecode(run);
      if (decoded === null) break;
      run = decoded;
    }
    pushRun(b, run);
  }
  return b.build();
}

/** Hex digits [from, to) of `text` as bytes, each mapped to its two digits (or, for dump lines, to `lineEnd`). */
function pushHexBytes(run: Run, text: string, from: number, to: number, lineEnd: number | null, swap: number): void {
  const bytes: [number, number][] = [];
  for (let i = from; i + 1 < to; i += 2) {
    bytes.push([hexValue(text.charCodeAt(i)) * 16 + hexValue(text.charCodeAt(i + 1)), i]);
  }
  if (swap > 1) {
    for (let g = 0; g + swap <= bytes.length; g += swap) {
      const group = bytes.slice(g, g + swap).reverse();
      for (let k = 0; k < swap; k++) bytes[g + k] = [group[k]![0], bytes[g + k]![1]];
    }
  }
  for (const [value, at] of bytes) {
    run.chars.push(String.fromCharCode(value));
    run.starts.push(at);
    run.ends.push(lineEnd ?? at + 2);
  }
}

interface DumpLine {
  readonly groups: [number, number][];
  readonly width: number;
  readonly lineEnd: number;
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
  return groups.length >= 2 ? { groups, width, lineEnd: end } : null;
}

/** Lines of hex dumps, each block of consecutive dump lines read as one byte stream. */
function dumpViews(text: string): DerivedView[] {
  if (!/[0-9A-Fa-f]{2}[ \t][0-9A-Fa-f]{2}/.test(text)) return [];
  const straight = new ViewBuilder();
  const swapped = new ViewBuilder();
  let anySwappable = false;
  let block: Run = { chars: [], starts: [], ends: [] };
  let swapBlock: Run = { chars: [], starts: [], ends: [] };
  const flush = () => {
    if (block.chars.length > 0) pushRun(straight, block);
    if (swapBlock.chars.length > 0) pushRun(swapped, swapBlock);
    block = { chars: [], starts: [], ends: [] };
    swapBlock = { chars: [], starts: [], ends: [] };
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
        if (line.width > 2) {
          anySwappable = true;
          pushHexBytes(swapBlock, text, from, to, contentEnd, line.width / 2);
        }
      }
    }
    lineStart = lineEnd + 1;
  }
  flush();
  const views: DerivedView[] = [];
  const a = straight.build();
  if (a) views.push(a);
  const s = anySwappable ? swapped.build() : null;
  if (s) views.push(s);
  return views;
}

// Plain runs (`xxd -p` wraps them at 60), and `\xNN` / `0xNN,` byte lists (`xxd -i`, printf, Python).
const plainHexRun = /(?:[0-9A-Fa-f]{2}){8,}(?:\r?\n(?:[0-9A-Fa-f]{2}){4,})*/g;
const escapedHexRun = /(?:(?:\\x|0x)[0-9A-Fa-f]{2}(?:,[ \t\r\n]{0,16})?){8,}/g;

/** Hex runs and hex dumps, decoded: one view per reading (plain runs and dumps, dumps of little-endian words). */
export function hexViews(text: string): DerivedView[] {
  const b = new ViewBuilder();
  plainHexRun.lastIndex = 0;
  for (let m = plainHexRun.exec(text); m !== null; m = plainHexRun.exec(text)) {
    const run: Run = { chars: [], starts: [], ends: [] };
    const end = m.index + m[0].length;
    let i = m.index;
    while (i < end) {
      let lineEnd = i;
      while (lineEnd < end && isHex(text.charCodeAt(lineEnd))) lineEnd++;
      pushHexBytes(run, text, i, lineEnd - ((lineEnd - i) % 2), null, 1);
      i = lineEnd;
      while (i < end && !isHex(text.charCodeAt(i))) i++;
    }
    pushRun(b, run);
  }
  if (text.includes('\\x') || text.includes('0x')) {
    escapedHexRun.lastIndex = 0;
    for (let m = escapedHexRun.exec(text); m !== null; m = escapedHexRun.exec(text)) {
      const run: Run = { chars: [], starts: [], ends: [] };
      for (const e of m[0].matchAll(/(?:\\x|0x)([0-9A-Fa-f]{2})/g)) {
        const at = m.index + e.index;
        run.chars.push(String.fromCharCode(Number.parseInt(e[1]!, 16)));
        run.starts.push(at);
        run.ends.push(at + e[0].length);
      }
      pushRun(b, run);
    }
  }
  const views = dumpViews(text);
  const plain = b.build();
  return plain ? [plain, ...views] : views;
}

const base64Value = new Int16Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) {
  base64Value[c.charCodeAt(0)] = i;
}
base64Value['-'.charCodeAt(0)] = 62;
base64Value['_'.charCodeAt(0)] = 63;

// One line's run of base64 characters; runs that end a line at a multiple of 4 continue on the next line.
const base64Run = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
const MIN_BASE64_RUN = 20;

/** Decodes base64 characters at `positions` (4 at a time; `=` ends a segment and decoding starts afresh after it). */
function decodeBase64(text: string, positions: readonly number[], run: Run): void {
  let quad: number[] = [];
  let at: number[] = [];
  const flush = () => {
    const [a = 0, b = 0, c = -1, d = -1] = quad;
    const bytes = [(a << 2) | (b >> 4)];
    if (c >= 0) bytes.push(((b & 15) << 4) | (c >> 2));
    if (c >= 0 && d >= 0) bytes.push(((c & 3) << 6) | d);
    const start = at[0]!;
    const end = at.at(-1)! + 1;
    for (const byte of bytes) {
      run.chars.push(String.fromCharCode(byte));
      run.starts.push(start);
      run.ends.push(end);
    }
    quad = [];
    at = [];
  };
  for (const p of positions) {
    const code = text.charCodeAt(p);
    if (code === 61) {
      if (quad.length >= 2) flush();
      quad = [];
      at = [];
      continue;
    }
    quad.push(base64Value[code]!);
    at.push(p);
    if (quad.length === 4) flush();
  }
  if (quad.length >= 2) flush();
}

/** Base64 runs of at least 20 characters (wrapped lines joined), decoded. */
export function base64View(text: string): DerivedView | null {
  const b = new ViewBuilder();
  base64Run.lastIndex = 0;
  let group: number[] = [];
  let groupEnd = -1;
  const flush = () => {
    if (group.length >= MIN_BASE64_RUN) {
      const run: Run = { chars: [], starts: [], ends: [] };
      decodeBase64(text, group, run);
      pushRun(b, run);
    }
    group = [];
  };
  for (let m = base64Run.exec(text); m !== null; m = base64Run.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    const continues =
      group.length > 0 &&
      groupEnd >= 0 &&
      (start === groupEnd + 1 || (start === groupEnd + 2 && text[groupEnd] === '\r'));
    if (!continues) flush();
    if (group.length + m[0].length > MAX_RUN_CHARS) flush();
    for (let i = start; i < end; i++) group.push(i);
    const atLineEnd = end === text.length || text[end] === '\n' || text[end] === '\r';
    const wraps = atLineEnd && m[0].length % 4 === 0 && !m[0].endsWith('=');
    groupEnd = wraps ? end : -1;
    if (!wraps) flush();
  }
  flush();
  return b.build();
}
