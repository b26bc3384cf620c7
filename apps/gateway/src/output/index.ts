/**
 * Output that is safe to hand to an AI (issue #7): masking of known secret formats, private key blocks and the
 * account's redaction patterns, and caps that keep the newest output. Pure: no I/O, no clock. See README.md for
 * the formats, the line-wrap approach, the false-positive policy and the bounds.
 */
export {
  type CappedText,
  capOutput,
  DEFAULT_MAX_CHARS,
  DEFAULT_MAX_LINES,
  OutputLimits,
} from './cap';
export { type MaskedText, type MaskOptions, maskSecrets } from './mask';
export { maskCutStart, maskWindow } from './mask-window';
export { createOutputMasker, type OutputMasker } from './output-masker';
export {
  PREPARE_MARGIN_CHARS,
  type PreparedOutput,
  type PrepareOptions,
  prepareForAi,
} from './prepare-for-ai';
export {
  compileRedactionPatterns,
  MAX_REDACTION_PATTERN_LENGTH,
  MAX_REDACTION_PATTERNS,
} from './redaction-patterns';
export { MASK } from './scan';
export {
  createStreamMasker,
  STREAM_HOLD_CHARS,
  STREAM_MAX_HOLD_CHARS,
  type StreamMasker,
  StreamMaskerOptions,
} from './stream-masker';
