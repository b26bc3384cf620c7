import { LetKiteError } from '@letkite/protocol';

const units: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `90s`, `10m`, `12h`, `30d` into milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d{1,6})([smhd])$/.exec(text.trim());
  const unit = m?.[2] === undefined ? undefined : units[m[2]];
  if (!m || unit === undefined || Number(m[1]) <= 0) {
    throw new LetKiteError('invalid_params', `"${text}" is not a duration like 90s, 10m, 12h or 30d`);
  }
  return Number(m[1]) * unit;
}
