/**
 * Makes every character a person could not see, or could misread, visible — for the approval page, where the
 * approver must see exactly what will run (DESIGN §6). C0 controls become their Control Pictures (`␊`, `␛`, `␀`),
 * DEL `␡`; C1 controls, bidirectional overrides, zero-width and other format characters, unusual spaces, tag
 * characters, variation selectors and lone surrogates become `<U+XXXX>`.
 */

export interface TextPart {
  text: string;
  /** True for a symbol that stands for an invisible or control character. */
  special: boolean;
}

/** Code point ranges (inclusive) that render as nothing, as a space, or change the order of what follows. */
const INVISIBLE: readonly [number, number][] = [
  [0x80, 0x9f],
  [0xa0, 0xa0],
  [0xad, 0xad],
  [0x34f, 0x34f],
  [0x61c, 0x61c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x2000, 0x200f],
  [0x2028, 0x202f],
  [0x205f, 0x206f],
  [0x2800, 0x2800],
  [0x3000, 0x3000],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff0, 0xfffb],
  [0xe0000, 0xe007f],
  [0xe0100, 0xe01ef],
];

function codePointLabel(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** The symbol for one character, or null when it shows as itself. */
export function symbolFor(ch: string): string | null {
  const cp = ch.codePointAt(0) ?? 0;
  if (cp < 0x20) return String.fromCodePoint(0x2400 + cp);
  if (cp === 0x7f) return '\u2421';
  if (ch.length === 1 && cp >= 0xd800 && cp <= 0xdfff) return codePointLabel(ch);
  if (INVISIBLE.some(([lo, hi]) => cp >= lo && cp <= hi)) return codePointLabel(ch);
  return null;
}

/** Splits text into plain runs and symbols. A line feed also keeps its line break, so long text stays readable. */
export function visibleParts(text: string): TextPart[] {
  const parts: TextPart[] = [];
  let plain = '';
  const flush = () => {
    if (plain) parts.push({ text: plain, special: false });
    plain = '';
  };
  // Iterate by code unit pairs so that a lone surrogate is seen alone.
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    const pair = code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    const ch = pair ? text.slice(i, i + 2) : (text[i] ?? '');
    if (pair) i++;
    const symbol = symbolFor(ch);
    if (symbol === null) {
      plain += ch;
      continue;
    }
    flush();
    parts.push({ text: symbol, special: true });
    if (ch === '\n') plain += '\n';
  }
  flush();
  return parts;
}

/** The whole text with symbols in place (for tests and plain-text copies). */
export function visibleText(text: string): string {
  return visibleParts(text)
    .map((p) => p.text)
    .join('');
}
