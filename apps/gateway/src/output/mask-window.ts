import { type MaskedText, type MaskOptions, maskSecrets } from './mask';
import { MASK, replacementFor, scanSecrets } from './scan';

/**
 * Masks the text whole, then returns only `[from, to)` of it (offsets of `text`): a secret that straddles an edge
 * of the window is shown as `***` on each side, never as half a secret. Callers read a margin around the window they
 * return (read_file, job_output), so what straddles the edge is seen whole here. `masked_count` counts the `***` in
 * the returned text.
 */
export function maskWindow(
  text: string,
  from: number,
  to: number,
  options: MaskOptions & { cutAtStart?: boolean } = {},
): MaskedText {
  const { ranges } = scanSecrets(text, { extraPatterns: options.extraPatterns, cutAtStart: options.cutAtStart });
  const parts: string[] = [];
  let count = 0;
  let pos = from;
  for (const r of ranges) {
    if (r.end <= from) continue;
    if (r.start >= to) break;
    if (r.start > pos) parts.push(text.slice(pos, r.start));
    const inside = { ...r, start: Math.max(r.start, from), end: Math.min(r.end, to) };
    parts.push(r.collapse ? MASK : replacementFor(text, inside));
    count += 1;
    pos = Math.min(r.end, to);
  }
  if (pos < to) parts.push(text.slice(pos, to));
  // Cutting can make harmless text token-shaped at the window's edges: mask once more (a fixed point of maskSecrets).
  const again = maskSecrets(parts.join(''), { extraPatterns: options.extraPatterns });
  return { text: again.text, masked_count: count + again.masked_count };
}

/**
 * For text whose start was cut off at an unknown point (an agent kept only the newest output, a job log dropped its
 * oldest bytes, and no margin before it exists): the first word, which may be the tail of a secret too short to
 * recognise, becomes `***`. Returns the text unchanged when it starts with whitespace.
 */
export function maskCutStart(text: string): MaskedText {
  const word = /^[^\s]{1,4096}/.exec(text);
  if (word === null || /^\*+$/.test(word[0])) return { text, masked_count: 0 };
  return { text: `${MASK}${text.slice(word[0].length)}`, masked_count: 1 };
}
