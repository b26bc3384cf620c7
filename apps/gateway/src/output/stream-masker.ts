import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { applyMask, scanSecrets } from './scan';

/** Characters always held back: more than any secret needs before it is recognisable, even wrapped. */
export const STREAM_HOLD_CHARS = 4096;
/** Most characters held back while a secret (in practice, a private key block) is still open. */
export const STREAM_MAX_HOLD_CHARS = 65_536;

export const StreamMaskerOptions = z
  .object({
    /** The account's redaction patterns, compiled by `compileRedactionPatterns`. */
    extraPatterns: z.array(z.instanceof(RegExp)).optional(),
    holdChars: z.number().int().min(256).default(STREAM_HOLD_CHARS),
    maxHoldChars: z.number().int().min(1024).default(STREAM_MAX_HOLD_CHARS),
  })
  .refine((o) => o.maxHoldChars >= 4 * o.holdChars, { message: 'maxHoldChars must be at least 4 × holdChars' });
export type StreamMaskerOptions = z.input<typeof StreamMaskerOptions>;

export interface StreamMasker {
  /** Adds a chunk; returns the masked text that is now safe to pass on (often empty). */
  push(chunk: string): string;
  /** Ends the stream; returns the rest, masked. The masker can then be reused for a new stream. */
  end(): string;
  /** Secrets masked so far. */
  readonly masked_count: number;
}

const encodedRunChar = /[A-Za-z0-9+/=_-]/;

/**
 * Moves a cut back so that it falls neither inside an escape sequence (the next part would start with its tail)
 * nor inside a run of base64 or hex characters (decoding the rest of the run from the cut would be misaligned), as
 * long as no more than `maxHoldChars` stay held (`floor`); a run longer than that is cut where it is.
 */
function keepRunsWhole(text: string, cut: number, floor: number): number {
  const esc = text.lastIndexOf('\x1b', cut - 1);
  if (esc >= 0 && cut - esc < 64 && /^\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*)?$/.test(text.slice(esc, cut))) {
    cut = esc;
  }
  if (!encodedRunChar.test(text[cut - 1] ?? '') || !encodedRunChar.test(text[cut] ?? '')) return cut;
  let start = cut;
  while (start > 0 && encodedRunChar.test(text[start - 1]!)) start--;
  return start >= floor ? start : cut;
}

/**
 * Masks a stream (terminal or job output) chunk by chunk. It keeps back the last `holdChars` characters, and
 * further back to the start of any secret that reaches into them, so a secret split across chunks is seen whole.
 * A private key block longer than `maxHoldChars` is emitted as `***` and the following key lines are swallowed
 * until its END line (or the first line that is not a key line).
 */
export function createStreamMasker(options: StreamMaskerOptions = {}): StreamMasker {
  const parsed = StreamMaskerOptions.safeParse(options);
  if (!parsed.success) {
    throw new LetKiteError('invalid_params', `invalid stream masker options: ${z.prettifyError(parsed.error)}`);
  }
  const { extraPatterns, holdChars, maxHoldChars } = parsed.data;
  let pending = '';
  let scannedLength = 0;
  let insidePrivateKey = false;
  let count = 0;

  function emit(final: boolean): string {
    const startedInside = insidePrivateKey;
    const scan = scanSecrets(pending, { extraPatterns, insidePrivateKey });
    const wanted = final ? pending.length : pending.length - holdChars;
    let cut = wanted;
    for (let moved = true; moved; ) {
      moved = false;
      for (const r of scan.ranges) {
        if (r.contextStart < cut && cut < r.end) {
          cut = r.contextStart;
          moved = true;
        }
      }
    }
    if (pending.length - cut > maxHoldChars) {
      // Held too long: pass the open secret on as `***` (a key block's rest is swallowed via insidePrivateKey).
      for (const r of scan.ranges) if (r.contextStart < wanted && r.end > wanted) cut = Math.max(wanted, r.end);
      if (cut < wanted) cut = wanted;
    }
    if (cut < pending.length) cut = keepRunsWhole(pending, cut, pending.length - maxHoldChars);
    const code = pending.charCodeAt(cut - 1);
    if (cut < pending.length && code >= 0xd800 && code <= 0xdbff) cut -= 1;
    if (cut <= 0) {
      scannedLength = pending.length;
      return '';
    }
    const emitted = scan.ranges.filter((r) => r.start < cut);
    const continuation = startedInside && emitted[0]?.start === 0 ? 1 : 0;
    count += emitted.length - continuation;
    insidePrivateKey = cut === pending.length ? scan.privateKeyOpenAtEnd && !final : false;
    const out = applyMask(pending, emitted, cut).text;
    pending = pending.slice(cut);
    scannedLength = pending.length;
    return out;
  }

  return {
    push(chunk) {
      pending += chunk;
      // Rescan only after 4 × holdChars more arrived: each character is scanned about 1.25 times however small
      // the chunks, at the price of up to 5 × holdChars of latency.
      if (pending.length - scannedLength < 4 * holdChars) return '';
      return emit(false);
    },
    end() {
      const out = pending === '' ? '' : emit(true);
      pending = '';
      scannedLength = 0;
      insidePrivateKey = false;
      return out;
    },
    get masked_count() {
      return count;
    },
  };
}
