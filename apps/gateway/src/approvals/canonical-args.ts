import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted by UTF-16 code units at every depth, no whitespace, `undefined` members
 * dropped, strings and numbers as `JSON.stringify` writes them (lone surrogates escaped, so any string has one
 * spelling). Two values that mean the same call give the same bytes; any change to a value changes them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot hash the number ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new TypeError(`cannot hash a value of type ${typeof value}`);
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Arguments left out of an approval's binding: `machine` (the binding holds the resolved machine id, so an id and
 * a unique name of the same machine are the same call) and `confirm` (the AI's acknowledgement that it showed the
 * person the command; a human approval of the exact call is stronger and lifts `confirm` as well).
 */
export const UNBOUND_ARGS = ['machine', 'confirm'] as const;

/** The canonical JSON of a call's bound arguments (what the approver sees) and its SHA-256. */
export function boundArguments(args: Record<string, unknown>): { json: string; sha256: string } {
  const bound = Object.fromEntries(
    Object.entries(args).filter(([k]) => !(UNBOUND_ARGS as readonly string[]).includes(k)),
  );
  const json = canonicalJson(bound);
  return { json, sha256: sha256Hex(json) };
}

/** The policy version an approval binds to: the SHA-256 of the resolved policy's canonical JSON. */
export function policyVersion(policy: unknown): string {
  return sha256Hex(canonicalJson(policy));
}

/**
 * The id an approval binds to when one call runs on several machines: `set_` + SHA-256 of the canonical JSON of
 * the sorted, distinct machine ids. Order and duplicates do not matter; adding or removing any machine changes it.
 */
export function machineSetId(machineIds: readonly string[]): string {
  return `set_${sha256Hex(canonicalJson([...new Set(machineIds)].sort()))}`;
}
