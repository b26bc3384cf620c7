/**
 * Texts derived from the output that a reader sees through: the output without its escape sequences and invisible
 * characters, and the decoded form of URL-encoded, hex and base64 runs. Each derived character remembers the
 * original range it came from, so a secret found in a view is masked in the original (README, "Seeing through").
 */
export interface DerivedView {
  readonly text: string;
  /** Per view character, where its original starts; -1 for a separator between runs (never part of a range). */
  readonly starts: Int32Array;
  /** Per view character, where its original ends (exclusive). */
  readonly ends: Int32Array;
}

/** Builds a view character by character, each with its original [start, end). */
export class ViewBuilder {
  private codes = new Uint16Array(256);
  private starts = new Int32Array(256);
  private ends = new Int32Array(256);
  private n = 0;

  get length(): number {
    return this.n;
  }

  push(code: number, start: number, end: number): void {
    if (this.n === this.codes.length) this.grow();
    this.codes[this.n] = code;
    this.starts[this.n] = start;
    this.ends[this.n] = end;
    this.n += 1;
  }

  /** A character no rule matches across (NUL): keeps two decoded runs from being read as one. */
  separate(): void {
    if (this.n === 0 || this.starts[this.n - 1] === -1) return;
    this.push(0, -1, -1);
  }

  build(): DerivedView | null {
    if (this.n === 0) return null;
    const parts: string[] = [];
    for (let i = 0; i < this.n; i += 8192) {
      parts.push(String.fromCharCode(...this.codes.subarray(i, Math.min(this.n, i + 8192))));
    }
    return { text: parts.join(''), starts: this.starts.slice(0, this.n), ends: this.ends.slice(0, this.n) };
  }

  private grow(): void {
    const size = this.codes.length * 2;
    const codes = new Uint16Array(size);
    codes.set(this.codes);
    const starts = new Int32Array(size);
    starts.set(this.starts);
    const ends = new Int32Array(size);
    ends.set(this.ends);
    this.codes = codes;
    this.starts = starts;
    this.ends = ends;
  }
}

/**
 * The original ranges of the view range [start, end): one per stretch without a separator, from the earliest
 * original start of its characters to the latest original end (what lies between them in the original, such as an
 * escape sequence or a hex dump's offset column, is masked with it).
 */
export function originalRanges(view: DerivedView, start: number, end: number): [number, number][] {
  const out: [number, number][] = [];
  let pieceStart = -1;
  let pieceEnd = -1;
  for (let i = start; i < end; i++) {
    const s = view.starts[i]!;
    if (s < 0) {
      if (pieceStart >= 0) out.push([pieceStart, pieceEnd]);
      pieceStart = -1;
      continue;
    }
    // Min and max: little-endian words put a later byte's digits first.
    pieceStart = pieceStart < 0 ? s : Math.min(pieceStart, s);
    pieceEnd = Math.max(pieceEnd, view.ends[i]!);
  }
  if (pieceStart >= 0) out.push([pieceStart, pieceEnd]);
  return out;
}

// ESC [ … final (CSI), ESC ] … BEL or ESC \ (OSC), ESC P/X/^/_ … ESC \ (DCS, SOS, PM, APC), other ESC sequences
// (charset designation `ESC ( B`, keypad modes), the 8-bit CSI, and characters a terminal or a reader does not show.
const hidden =
  /\x1b\[[0-?]{0,64}[ -/]{0,8}[@-~]|\x9b[0-?]{0,64}[ -/]{0,8}[@-~]|\x1b\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]{0,4096}(?:\x1b\\)?|\x1b[ -/]{0,4}[0-~]?|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f\u00ad\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\ufeff]/g;
const hiddenTrigger = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x9b\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]/;

/**
 * The text as a reader sees it: escape sequences (colour, cursor moves, titles, hyperlinks), control characters and
 * zero-width characters removed, and a backspace taking back the character before it (`x\bx` overstrike). Null
 * when the text has none of them.
 */
export function visibleView(text: string): DerivedView | null {
  if (!hiddenTrigger.test(text)) return null;
  const starts = new Int32Array(text.length);
  let length = 0;
  let pos = 0;
  hidden.lastIndex = 0;
  for (let m = hidden.exec(text); m !== null; m = hidden.exec(text)) {
    for (let i = pos; i < m.index; i++) starts[length++] = i;
    pos = m.index + m[0].length;
    // Overstrike: the backspace takes back the character before it.
    if (m[0] === '\b' && length > 0) length -= 1;
  }
  for (let i = pos; i < text.length; i++) starts[length++] = i;
  const kept = starts.slice(0, length);
  const ends = new Int32Array(length);
  const codes = new Uint16Array(length);
  for (let i = 0; i < length; i++) {
    ends[i] = kept[i]! + 1;
    codes[i] = text.charCodeAt(kept[i]!);
  }
  const parts: string[] = [];
  for (let i = 0; i < length; i += 8192) parts.push(String.fromCharCode(...codes.subarray(i, i + 8192)));
  return { text: parts.join(''), starts: kept, ends };
}

/** Maps a view range of `inner` (a view of `outer`'s text) to `outer`'s original. */
export function composeViews(outer: DerivedView, inner: DerivedView): DerivedView {
  const starts = new Int32Array(inner.starts.length);
  const ends = new Int32Array(inner.ends.length);
  for (let i = 0; i < inner.starts.length; i++) {
    const s = inner.starts[i]!;
    if (s < 0) {
      starts[i] = -1;
      ends[i] = -1;
      continue;
    }
    starts[i] = outer.starts[s]!;
    ends[i] = outer.ends[inner.ends[i]! - 1]!;
  }
  return { text: inner.text, starts, ends };
}
