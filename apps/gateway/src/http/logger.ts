import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = 'json' | 'pretty';

/**
 * Fields that must never reach a log line, whatever a caller passes by mistake: pino replaces them. The request
 * logger logs none of these in the first place (no headers, no query string, no body).
 */
const REDACT = [
  'authorization',
  'cookie',
  'token',
  'password',
  'secret',
  '*.authorization',
  '*.cookie',
  '*.token',
  '*.password',
  '*.secret',
  'headers.*',
  'req.headers.*',
];

/** Keys pino adds to every line; the pretty format leaves them out. */
const QUIET = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'name']);

/** One JSON log line as a human reads it: `msg key=value …`, the level in front unless it is info. */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.trimEnd();
  }
  const level = typeof entry.level === 'string' && entry.level !== 'info' ? `${entry.level.toUpperCase()} ` : '';
  const fields = Object.entries(entry)
    .filter(([k]) => !QUIET.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `${level}${String(entry.msg ?? '')}${fields.length > 0 ? ` ${fields.join(' ')}` : ''}`;
}

export interface LoggerOptions {
  level: LogLevel;
  /** json: one JSON object per line (the default unless stderr is a terminal); pretty: `[gateway] msg k=v`. */
  format?: LogFormat;
  /**
   * Where lines go instead of stderr, already in the pretty format without the `[gateway]` prefix (the embedded
   * `letkite start` prints them among its own lines).
   */
  write?: (line: string) => void;
}

/** The gateway's logger (pino), writing synchronously to stderr so nothing is lost when the process exits. */
export function createGatewayLogger(options: LoggerOptions): Logger {
  const base = {
    level: options.level,
    base: { name: 'gateway', pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: REDACT, censor: '[redacted]' },
  };
  const write = options.write;
  if (write) return pino(base, { write: (line: string) => write(prettyLine(line)) });
  const format = options.format ?? (process.stderr.isTTY ? 'pretty' : 'json');
  if (format === 'pretty')
    return pino(base, { write: (line: string) => process.stderr.write(`[gateway] ${prettyLine(line)}\n`) });
  return pino(base, pino.destination({ fd: 2, sync: true }));
}
