/**
 * The sentinel protocol of a shell session. Each command is sent to bash as one line:
 *
 *   eval -- $'<command, every unsafe byte as \xHH>' </dev/null; __lk_done <nonce>
 *
 * so a command with unbalanced quotes or a syntax error cannot swallow what follows (eval gets the whole text as
 * one word and reports its own parse errors), and the command cannot read our control pipe (stdin is /dev/null).
 * `__lk_done` then prints, on stdout, `\x1fLK:<nonce>:<status>:<byte length of $PWD>:<$PWD>\n`, and on stderr
 * `\x1fLK:<nonce>\n`. The nonce is fresh random hex per command, so output that imitates a marker (even an
 * earlier command's) never matches; the marker is searched anywhere in the stream, so output without a final
 * newline is still delimited; $PWD is length-prefixed, so any directory name (newlines included) parses.
 */

/** Defines `__lk_done`; sent once when the session starts. */
export const SESSION_PRELUDE =
  '__lk_done() { local __lk_s=$? LC_ALL=C; builtin printf \'\\037LK:%s:%d:%d:%s\\n\' "$1" "$__lk_s" "$\x7b#PWD}" "$PWD"; builtin printf \'\\037LK:%s\\n\' "$1" >&2; }\n';

const SAFE_BYTE = /[A-Za-z0-9 _./,:=+@%-]/;

/** Quotes any text as a bash ANSI-C string `$'…'` whose value is exactly the text's UTF-8 bytes. */
export function ansiCQuote(text: string): string {
  let out = "$'";
  for (const byte of Buffer.from(text, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && SAFE_BYTE.test(ch) ? ch : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `${out}'`;
}

/** The line that runs one command and then reports its status and working directory. */
export function commandLine(command: string, nonce: string): string {
  return `eval -- ${ansiCQuote(command)} </dev/null; __lk_done ${nonce}\n`;
}

export interface SessionStatus {
  exitCode: number;
  cwd: string;
}

/**
 * Finds the marker in a byte stream fed in chunks: everything before it is the command's output (`onData`),
 * bytes after it are handed to `parseTrailer` until that says how much it consumed. Only `marker.length - 1`
 * bytes are ever held back while the marker is not complete, so output streams on.
 */
export class MarkerScanner {
  private pending: Buffer = Buffer.alloc(0);
  private found = false;
  private done = false;
  private readonly marker: Buffer;

  constructor(
    marker: string,
    private readonly onData: (chunk: Buffer) => void,
    /** Given the bytes after the marker, returns how many form the trailer, or -1 while it is incomplete. */
    private readonly parseTrailer: (rest: Buffer) => number = () => 0,
  ) {
    this.marker = Buffer.from(marker, 'utf8');
  }

  get complete(): boolean {
    return this.done;
  }

  push(chunk: Buffer): void {
    if (this.done) return;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    if (!this.found) {
      const at = this.pending.indexOf(this.marker);
      if (at < 0) {
        const keep = Math.min(this.pending.length, this.marker.length - 1);
        const emit = this.pending.length - keep;
        if (emit > 0) this.onData(this.pending.subarray(0, emit));
        this.pending = this.pending.subarray(emit);
        return;
      }
      if (at > 0) this.onData(this.pending.subarray(0, at));
      this.pending = this.pending.subarray(at + this.marker.length);
      this.found = true;
    }
    if (this.parseTrailer(this.pending) >= 0) this.done = true;
  }
}

/**
 * Parses `<status>:<len>:<cwd bytes>\n` after the stdout marker. Returns the bytes consumed and the values, or
 * null while incomplete. A malformed trailer (which our own printf never writes) reads as status 255.
 */
export function parseStatusTrailer(rest: Buffer): { consumed: number; status: SessionStatus } | null {
  const first = rest.indexOf(0x3a); // ':'
  if (first < 0) return rest.length > 24 ? { consumed: rest.length, status: { exitCode: 255, cwd: '' } } : null;
  const second = rest.indexOf(0x3a, first + 1);
  if (second < 0) return rest.length > 48 ? { consumed: rest.length, status: { exitCode: 255, cwd: '' } } : null;
  const exitCode = Number(rest.subarray(0, first).toString('latin1'));
  const len = Number(rest.subarray(first + 1, second).toString('latin1'));
  if (!Number.isInteger(exitCode) || !Number.isInteger(len) || len < 0) {
    return { consumed: rest.length, status: { exitCode: 255, cwd: '' } };
  }
  const end = second + 1 + len;
  if (rest.length < end + 1) return null;
  return { consumed: end + 1, status: { exitCode, cwd: rest.subarray(second + 1, end).toString('utf8') } };
}

/** The stdout and stderr markers of one command. */
export function markers(nonce: string): { stdout: string; stderr: string } {
  return { stdout: `\x1fLK:${nonce}:`, stderr: `\x1fLK:${nonce}\n` };
}
