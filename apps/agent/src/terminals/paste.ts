import type { PasteMode } from '@letkite/protocol';

export const PASTE_START = '\x1b[200~';
export const PASTE_END = '\x1b[201~';

/**
 * Removes bracketed-paste markers from text that is about to be pasted, repeatedly, so that removing one cannot
 * join the pieces around it into a new one (`\x1b[20\x1b[201~1~`).
 */
export function stripPasteMarkers(text: string): string {
  let out = text;
  for (;;) {
    const next = out.replaceAll(PASTE_START, '').replaceAll(PASTE_END, '');
    if (next === out) return out;
    out = next;
  }
}

/**
 * What to write to the pty for `text`. Pasting (always, or auto when the text has a line break and the program
 * turned bracketed paste on) wraps it in the markers after stripping any it contains, and turns line breaks
 * into CR as a terminal's paste does; typed text (`never`, or auto without a line break) goes as it is.
 */
export function encodeText(
  text: string,
  mode: PasteMode,
  bracketedPasteMode: boolean,
): { data: string; pasted: boolean } {
  const paste = mode === 'always' || (mode === 'auto' && bracketedPasteMode && /[\r\n]/.test(text));
  if (!paste) return { data: text, pasted: false };
  const body = stripPasteMarkers(text).replace(/\r?\n/g, '\r');
  return { data: `${PASTE_START}${body}${PASTE_END}`, pasted: true };
}
