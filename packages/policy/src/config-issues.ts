import { LetKiteError } from '@letkite/protocol';
import { parse, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { type KeyPath, lineOf, tomlKeyLines } from './toml-key-lines';

/** One problem in a policy or ceiling document: where (key path, line for TOML) and what. */
export interface ConfigIssue {
  /** Key path like `files[1].access`; empty for the document as a whole. */
  path: string;
  /** 1-based line in the TOML text, when known. */
  line?: number;
  message: string;
}

/** Writes a key path the way a reader of the TOML file would: `files[1].access`. */
export function formatKeyPath(path: KeyPath): string {
  return path.map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`)).join('');
}

function valueAt(data: unknown, path: KeyPath): unknown {
  let value = data;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[part];
  }
  return value;
}

function quote(value: unknown): string | undefined {
  if (value === undefined || (typeof value === 'object' && value !== null)) return undefined;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function toKeyPath(path: readonly PropertyKey[]): (string | number)[] {
  return path.map((p) => (typeof p === 'number' ? p : String(p)));
}

/** Turns zod issues into ConfigIssues: one per unknown key, the bad value quoted, the line when `lines` knows it. */
export function issuesFromZod(error: z.ZodError, data: unknown, lines?: ReadonlyMap<string, number>): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const add = (path: KeyPath, message: string) => {
    const line = lines && lineOf(lines, path);
    out.push(
      line === undefined ? { path: formatKeyPath(path), message } : { path: formatKeyPath(path), line, message },
    );
  };
  for (const issue of error.issues) {
    const path = toKeyPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add([...path, key], `unknown key ${JSON.stringify(key)}`);
      continue;
    }
    const value = valueAt(data, path);
    const got = issue.code === 'custom' || value === undefined ? undefined : quote(value);
    const missing = value === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_value');
    const message =
      missing && issue.code === 'invalid_type'
        ? 'required'
        : missing && !issue.message.includes('required')
          ? `required: ${issue.message}`
          : issue.message;
    add(path, got === undefined ? message : `${message} (got ${got})`);
  }
  // Reading order: by line, issues without a line (missing keys) last; stable otherwise.
  return out.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
}

/** The one error for a bad document: `invalid_params`, every issue in the message and in `details.issues`. */
export function invalidDocument(what: string, issues: readonly ConfigIssue[]): LetKiteError {
  const listed = issues
    .map((i) => `${i.line === undefined ? '' : `line ${i.line}: `}${i.path === '' ? '' : `${i.path}: `}${i.message}`)
    .join('; ');
  return new LetKiteError('invalid_params', `invalid ${what}: ${listed}`, { issues });
}

/**
 * Parses TOML text and validates it with `schema`. Throws `invalidDocument(what, …)` naming every schema problem
 * with its line, or the first syntax error (the TOML parser stops there) with its line and column.
 */
export function parseTomlWith<S extends z.ZodType>(schema: S, text: string, what: string): z.infer<S> {
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    if (err instanceof TomlError) {
      const reason = err.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? 'syntax error';
      throw invalidDocument(what, [{ path: '', line: err.line, message: `${reason} (column ${err.column})` }]);
    }
    throw invalidDocument(what, [{ path: '', message: 'not a TOML document' }]);
  }
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  throw invalidDocument(what, issuesFromZod(result.error, data, tomlKeyLines(text)));
}

/** Validates an already-decoded document (JSON, or a TOML table) with `schema`; errors as in `parseTomlWith`. */
export function parseWith<S extends z.ZodType>(schema: S, data: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  throw invalidDocument(what, issuesFromZod(result.error, data));
}
