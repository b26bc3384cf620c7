import { z } from 'zod';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** Bounds of an approval's lifetime (DESIGN §6). */
export const MIN_APPROVAL_TIMEOUT_MS = MINUTE_MS;
export const MAX_APPROVAL_TIMEOUT_MS = 24 * HOUR_MS;
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * MINUTE_MS;

const DURATION_RE = /^(?:(\d{1,3})h)?(?:(\d{1,5})m)?(?:(\d{1,7})s)?$/;

/** Parses `"10m"`, `"1h30m"`, `"90s"` to milliseconds; `undefined` when the text is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION_RE.exec(text);
  if (!m || text === '') return undefined;
  const [, h = '0', min = '0', s = '0'] = m;
  return (Number(h) * 3600 + Number(min) * 60 + Number(s)) * 1000;
}

/**
 * An approval timeout: a duration string (`"10m"`) or, for policies that went through JSON already, a number of
 * milliseconds. Always milliseconds after parsing, so a parsed policy parses again unchanged.
 */
export const ApprovalTimeout = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const ms = typeof value === 'string' ? parseDuration(value) : value;
  if (ms === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(value)} is not a duration like "10m", "1h30m" or "90s"`,
    });
    return z.NEVER;
  }
  if (!Number.isInteger(ms) || ms < MIN_APPROVAL_TIMEOUT_MS || ms > MAX_APPROVAL_TIMEOUT_MS) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} is outside 1m .. 24h` });
    return z.NEVER;
  }
  return ms;
});
