import type { OutputMasker } from '../output';

/** Longest string kept whole in an audit row's arguments; a file's content is not the log's business. */
export const MAX_AUDIT_STRING = 2048;

function cut(value: unknown): unknown {
  if (typeof value === 'string') {
    return value.length <= MAX_AUDIT_STRING
      ? value
      : `${value.slice(0, MAX_AUDIT_STRING)}… (${value.length - MAX_AUDIT_STRING} more characters)`;
  }
  if (Array.isArray(value)) return value.slice(0, 200).map(cut);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v)]));
  }
  return value;
}

/**
 * A tool call's arguments as the activity log keeps them: masked with the account's output masker first (a secret
 * is never stored, and masking before cutting means a secret cut in half is still recognised), then long strings
 * and lists cut.
 */
export function auditArguments(args: unknown, masker: OutputMasker): unknown {
  if (args === undefined || args === null) return {};
  return cut(masker.maskValue(args));
}
