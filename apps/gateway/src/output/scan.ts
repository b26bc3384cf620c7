import { composeViews, type DerivedView, originalRanges, visibleView } from './derived-views';
import { base64View, hexViews, percentView } from './encoded-runs';
import { crossesBreak, type JoinedLines, joinLines, toOriginalRange } from './line-joins';
import { findKeyBlocks, findKeyMarkers } from './private-keys';
import { type SecretRule, secretRules } from './secret-rules';

/** What masking replaces a secret with. */
export const MASK = '***';

/** One stretch of text to mask, in the original text's offsets. */
export interface MaskRange {
  readonly start: number;
  readonly end: number;
  /** Where the evidence starts (the `password=` before the value); a stream must not cut between the two. */
  readonly contextStart: number;
  /** Replace the whole range, line breaks included, with one `***` (private key blocks). */
  readonly collapse: boolean;
}

export interface ScanOptions {
  /** Account redaction patterns, already compiled (see `compileRedactionPatterns`). */
  readonly extraPatterns?: readonly RegExp[] | undefined;
  /** The text continues a private key block whose BEGIN line came earlier. */
  readonly insidePrivateKey?: boolean | undefined;
  /**
   * The text was cut off before its start (a window's margin, a capped tail): a base64 or hex run at its start is
   * decoded at every alignment.
   */
  readonly cutAtStart?: boolean | undefined;
}

export interface ScanResult {
  /** Sorted, merged, never overlapping or touching. */
  readonly ranges: MaskRange[];
  /** The last private key block may continue past the end of the text. */
  readonly privateKeyOpenAtEnd: boolean;
}

const accountRule = (pattern: RegExp): SecretRule => ({
  id: 'account-pattern',
  pattern:
    pattern.global && !pattern.sticky ? pattern : new RegExp(pattern.source, `${pattern.flags.replace('y', '')}g`),
  wraps: true,
  boundary: false,
});

const secretGroups = ['secret', 'secret2', 'secret3'] as const;

function isAlphanumeric(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/** A text and its lower-case copy, made once and only if a case-insensitive rule asks. */
class Haystack {
  private lower: string | undefined;
  constructor(readonly text: string) {}
  mayMatch(rule: SecretRule): boolean {
    if (rule.needles === undefined) return true;
    if (rule.pattern.ignoreCase) this.lower ??= this.text.toLowerCase();
    const searched = rule.pattern.ignoreCase ? this.lower! : this.text;
    return rule.needles.some((needle) => searched.includes(needle));
  }
}

const stickyCopies = new WeakMap<RegExp, RegExp>();

/**
 * A token that is already complete at the end of its line, followed by a line that starts a new `key=` or `key:`
 * (an env dump, HTTP headers, YAML) whose name the joined match would swallow: not taken as a wrap. Decided from
 * the neighbouring lines only, so a stream masks exactly as the whole text would.
 */
function startsNewKeyOnNextLine(
  rule: SecretRule,
  text: string,
  joined: JoinedLines,
  matchStart: number,
  matchEnd: number,
): boolean {
  const [start, end] = toOriginalRange(joined, matchStart, matchEnd);
  const lineEnd = start + text.slice(start, end).search(/[\r\n]/);
  const nextLine = lineEnd + (text.startsWith('\r\n', lineEnd) ? 2 : 1);
  const key = /^[ \t]*["']?([A-Za-z_][\w.-]{0,127})["']?[ \t]*[:=]/.exec(text.slice(nextLine, nextLine + 160));
  if (key === null || end > nextLine + key[0].length - 1) return false;
  // A token's own tail mixes digits and letters (`vb5JpW2f…: ` must not pass for a key name); names rarely do.
  if (/[0-9]/.test(key[1]!) && /[A-Za-z]/.test(key[1]!)) return false;
  let sticky = stickyCopies.get(rule.pattern);
  if (sticky === undefined) {
    sticky = new RegExp(rule.pattern.source, `${rule.pattern.flags.replace('g', '')}y`);
    stickyCopies.set(rule.pattern, sticky);
  }
  sticky.lastIndex = start;
  const onItsLine = sticky.exec(text);
  return onItsLine !== null && onItsLine.index + onItsLine[0].length === lineEnd;
}

/** A token starts after a non-alphanumeric character, or right where another secret found earlier ends. */
function isTokenStart(text: string, at: number, found: readonly MaskRange[]): boolean {
  if (at === 0 || !isAlphanumeric(text.charCodeAt(at - 1))) return true;
  return found.some((r) => r.start < at && r.end >= at);
}

function collect(rule: SecretRule, text: string, haystack: string, joined: JoinedLines | null, out: MaskRange[]): void {
  const re = rule.pattern;
  re.lastIndex = 0;
  for (let m = re.exec(haystack); m !== null; m = re.exec(haystack)) {
    const matchStart = m.index;
    const matchEnd = matchStart + m[0].length;
    if (matchEnd === matchStart) {
      re.lastIndex = matchStart + 1;
      continue;
    }
    if (joined !== null && !crossesBreak(joined, matchStart, matchEnd)) continue;
    let secretStart = matchStart;
    let secretEnd = matchEnd;
    const groups = m.indices?.groups;
    if (groups !== undefined) {
      for (const name of secretGroups) {
        const span = groups[name];
        if (span !== undefined) {
          [secretStart, secretEnd] = span;
          break;
        }
      }
    }
    const [contextStart] = joined === null ? [matchStart] : toOriginalRange(joined, matchStart, matchEnd);
    const rejected =
      (rule.boundary && !isTokenStart(text, contextStart, out)) ||
      /^\*+$/.test(haystack.slice(secretStart, secretEnd)) ||
      (rule.accept !== undefined && !rule.accept(haystack.slice(secretStart, secretEnd)));
    if (rejected) {
      re.lastIndex = matchStart + 1;
      continue;
    }
    if (joined !== null && startsNewKeyOnNextLine(rule, text, joined, matchStart, matchEnd)) continue;
    const [start, end] = joined === null ? [secretStart, secretEnd] : toOriginalRange(joined, secretStart, secretEnd);
    out.push({ start, end, contextStart, collapse: false });
    // Go on from the next character, not from the match's end: a variable-length token that ran on into the next
    // one must not hide that one's prefix.
    re.lastIndex = matchStart + 1;
  }
}

function merge(ranges: MaskRange[]): MaskRange[] {
  ranges.sort((a, b) => a.start - b.start);
  const merged: MaskRange[] = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last !== undefined && r.start <= last.end) {
      merged[merged.length - 1] = {
        start: last.start,
        end: Math.max(last.end, r.end),
        contextStart: Math.min(last.contextStart, r.contextStart),
        collapse: last.collapse || r.collapse,
      };
    } else {
      merged.push(r);
    }
  }
  return merged;
}

/**
 * Finds every secret in the text as it stands: each known format on the text as it is, the formats that can wrap
 * once more on the text with its line breaks removed (keeping only matches that cross a break), then private key
 * blocks.
 */
function scanText(text: string, options: ScanOptions): ScanResult {
  const joined = joinLines(text);
  const found: MaskRange[] = [];
  const rules = [...secretRules, ...(options.extraPatterns ?? []).map(accountRule)];
  const original = new Haystack(text);
  const withoutBreaks = joined === null ? null : new Haystack(joined.text);
  for (const rule of rules) {
    if (original.mayMatch(rule)) collect(rule, text, text, null, found);
    if (rule.wraps && joined !== null && withoutBreaks?.mayMatch(rule)) collect(rule, text, joined.text, joined, found);
  }
  const keys = findKeyBlocks(text, findKeyMarkers(text, joined), options.insidePrivateKey === true);
  for (const block of keys.blocks) {
    found.push({ start: block.start, end: block.end, contextStart: block.start, collapse: true });
  }
  return { ranges: found, privateKeyOpenAtEnd: keys.openAtEnd };
}

/** The secrets found in a derived view, as ranges of the original text. */
function scanView(view: DerivedView, options: ScanOptions, out: MaskRange[]): void {
  for (const r of scanText(view.text, { extraPatterns: options.extraPatterns }).ranges) {
    for (const [start, end] of originalRanges(view, r.start, r.end)) {
      const [contextStart] = originalRanges(view, r.contextStart, r.start + 1)[0] ?? [start];
      out.push({ start, end, contextStart: Math.min(contextStart, start), collapse: r.collapse });
    }
  }
}

/**
 * Finds every secret in the text: in the text as it stands, in the text as a reader sees it (escape sequences and
 * invisible characters removed), and in the decoded form of URL-encoded, hex and base64 runs (README, "Seeing
 * through"). Ranges are in the original text's offsets.
 */
export function scanSecrets(text: string, options: ScanOptions = {}): ScanResult {
  const direct = scanText(text, options);
  const found = direct.ranges;
  const visible = visibleView(text);
  if (visible !== null) scanView(visible, options, found);
  const base = visible?.text ?? text;
  const cut = options.cutAtStart === true;
  const decoded = [percentView(base), ...hexViews(base, cut), base64View(base, cut)];
  for (const view of decoded) {
    if (view === null) continue;
    scanView(visible === null ? view : composeViews(visible, view), options, found);
  }
  return { ranges: merge(found), privateKeyOpenAtEnd: direct.privateKeyOpenAtEnd };
}

// Line breaks, and CSI sequences (colour, cursor moves), which a masked range keeps after its `***`.
const keptInRange = /\r\n|\n|\r|\x1b\[[0-?]{0,64}[ -/]{0,8}[@-~]/g;

/**
 * `***`, followed by the line breaks and the CSI sequences the range covered unless it collapses, so wrapped
 * output keeps its shape and coloured output its colours.
 */
export function replacementFor(text: string, range: MaskRange): string {
  if (range.collapse) return MASK;
  const kept = text.slice(range.start, range.end).match(keptInRange);
  return kept === null ? MASK : MASK + kept.join('');
}

export interface AppliedMask {
  readonly text: string;
  /** For each range, where its `***` ends in the masked text. */
  readonly maskEnds: number[];
}

/** Replaces the ranges in `text.slice(0, until)`; ranges must lie before `until`. */
export function applyMask(text: string, ranges: readonly MaskRange[], until = text.length): AppliedMask {
  const parts: string[] = [];
  const maskEnds: number[] = [];
  let length = 0;
  let pos = 0;
  for (const r of ranges) {
    if (r.start >= until) break;
    const kept = text.slice(pos, r.start);
    const replacement = replacementFor(text, r);
    parts.push(kept, replacement);
    length += kept.length;
    maskEnds.push(length + MASK.length);
    length += replacement.length;
    pos = r.end;
  }
  parts.push(text.slice(pos, until));
  return { text: parts.join(''), maskEnds };
}

/** Where original offset `pos` lands in the masked text (a position inside a range lands after its `***`). */
export function maskedOffset(text: string, ranges: readonly MaskRange[], pos: number): number {
  let delta = 0;
  for (const r of ranges) {
    if (r.start >= pos) break;
    if (r.end > pos) return r.start + delta + replacementFor(text, r).length;
    delta += replacementFor(text, r).length - (r.end - r.start);
  }
  return pos + delta;
}
