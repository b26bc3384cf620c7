import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { TerminalInfo, TerminalReadResult, TerminalSendParams } from '@letkite/protocol';
import xterm from '@xterm/headless';
import * as pty from 'node-pty';
import type { PreparedLaunch } from '../executors/prepare-launch';
import { keyBytes } from './keys';
import { encodeText } from './paste';

/** Lines of scrollback the emulator keeps (what `recent` and `terminal_wait` can see). */
export const SCROLLBACK_LINES = 5000;
/** After SIGHUP, a terminal's processes get this long before SIGKILL. */
const CLOSE_GRACE_MS = 1000;

type Buffer = xterm.IBuffer;

/** The buffer's lines from `from`, with wrapped rows joined into the logical line they belong to. */
function logicalLines(buffer: Buffer, from: number, to: number): string[] {
  const lines: string[] = [];
  for (let y = Math.max(0, from); y < to; y++) {
    const line = buffer.getLine(y);
    if (!line) continue;
    const text = line.translateToString(true);
    if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  // Full-screen programs paint blanks explicitly; trailing blanks carry nothing for a reader.
  const trimmed = lines.map((l) => l.trimEnd());
  while (trimmed.length > 0 && trimmed[trimmed.length - 1] === '') trimmed.pop();
  return trimmed;
}

/**
 * One terminal: a pty running the run-as account's shell (in the sandbox when the shell level says so) and a
 * headless xterm.js that renders everything the pty writes, so screens — the alternate screen of vi or top
 * included — are read as a person would see them, and the gateway only relays text.
 */
export class TerminalSession {
  readonly id = `term_${randomBytes(16).toString('base64url')}`;
  lastUsed = Date.now();
  private readonly pty: pty.IPty;
  private readonly term: xterm.Terminal;
  private title: string;
  private version = 0;
  private exitCode: number | null = null;
  private exited = false;
  private lastSend: xterm.IMarker | undefined;
  private readonly waiters = new Set<() => void>();
  private killTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly owner: string,
    private readonly launch: PreparedLaunch,
    readonly cols: number,
    readonly rows: number,
  ) {
    const { plan, cwd } = launch;
    this.title = 'bash';
    this.term = new xterm.Terminal({ cols, rows, scrollback: SCROLLBACK_LINES, allowProposedApi: true });
    this.term.onTitleChange((t) => {
      this.title = t;
    });
    this.pty = pty.spawn(plan.file, plan.args, {
      name: 'xterm-256color',
      cols,
      rows,
      cwd,
      env: { ...plan.env, TERM: 'xterm-256color' },
      ...(plan.uid === undefined ? {} : { uid: plan.uid }),
      ...(plan.gid === undefined ? {} : { gid: plan.gid }),
    });
    this.pty.onData((data) => {
      this.term.write(data, () => {
        this.version++;
        this.wake();
      });
    });
    this.pty.onExit(({ exitCode }) => {
      this.exited = true;
      this.exitCode = exitCode;
      clearTimeout(this.killTimer);
      this.killGroup('SIGKILL');
      this.launch.release();
      // Let the emulator parse what is still queued before waiters look.
      this.term.write('', () => {
        this.version++;
        this.wake();
      });
    });
  }

  get ended(): boolean {
    return this.exited;
  }

  info(): TerminalInfo {
    return {
      terminal_id: this.id,
      title: this.title,
      host: hostname(),
      cols: this.cols,
      rows: this.rows,
      exited: this.exited,
      exit_code: this.exitCode,
    };
  }

  send(params: TerminalSendParams): { bytes: number; pasted: boolean } {
    this.lastUsed = Date.now();
    const modes = this.term.modes;
    let data = '';
    let pasted = false;
    if (params.text !== undefined && params.text !== '') {
      const encoded = encodeText(params.text, params.paste, modes.bracketedPasteMode);
      data += encoded.data;
      pasted = encoded.pasted;
    }
    for (const key of params.keys ?? [])
      data += keyBytes(key, { applicationCursorKeys: modes.applicationCursorKeysMode });
    if (params.submit) data += '\r';
    if (this.exited) return { bytes: 0, pasted: false };
    // terminal_wait's "last_send" starts at the line the cursor is on now.
    this.lastSend?.dispose();
    this.lastSend = this.term.buffer.active.type === 'normal' ? this.term.registerMarker(0) : undefined;
    if (data.length > 0) this.pty.write(data);
    return { bytes: Buffer.byteLength(data), pasted };
  }

  /** Resolves once everything the pty wrote so far is rendered. */
  settle(): Promise<void> {
    return new Promise((resolve) => this.term.write('', resolve));
  }

  read(mode: 'visible' | 'recent', lines: number): TerminalReadResult {
    this.lastUsed = Date.now();
    const buffer = this.term.buffer.active;
    let text: string;
    let above = '';
    if (mode === 'visible') {
      const rows: string[] = [];
      for (let y = buffer.baseY; y < buffer.baseY + this.rows; y++) {
        rows.push((buffer.getLine(y)?.translateToString(true) ?? '').trimEnd());
      }
      text = rows.join('\n').replace(/\n+$/, '');
      // The first row may continue a line that starts above the screen: its earlier rows go along for masking.
      for (let y = buffer.baseY; y > 0 && y > buffer.baseY - 64 && buffer.getLine(y)?.isWrapped; y--) {
        above = (buffer.getLine(y - 1)?.translateToString(true) ?? '') + above;
      }
    } else {
      text = logicalLines(buffer, 0, buffer.length).slice(-lines).join('\n');
    }
    return {
      ...this.info(),
      text,
      alternate_screen: buffer.type === 'alternate',
      cursor: { x: buffer.cursorX, y: buffer.cursorY },
      ...(above === '' ? {} : { above }),
    };
  }

  /** The text `terminal_wait` searches: from the last send's line (or everything), wrapped rows joined. */
  text(from: 'last_send' | 'all'): string {
    const buffer = this.term.buffer.active;
    const marker = this.lastSend;
    const start =
      from === 'last_send' && buffer.type === 'normal' && marker && !marker.isDisposed && marker.line >= 0
        ? marker.line
        : 0;
    return logicalLines(buffer, start, buffer.length).join('\n');
  }

  get outputVersion(): number {
    return this.version;
  }

  /** Resolves when output past `afterVersion` has been rendered, the shell exited, or `maxWaitMs` passed. */
  waitForOutput(afterVersion: number, maxWaitMs: number, signal?: AbortSignal): Promise<void> {
    if (this.version > afterVersion || this.exited || maxWaitMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (this.version > afterVersion || this.exited) done();
      };
      const timer = setTimeout(done, maxWaitMs);
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(check);
    });
  }

  /** SIGHUP to the shell's process group (what closing a terminal window does), SIGKILL after a grace period. */
  close(): void {
    if (!this.exited) {
      this.killGroup('SIGHUP');
      this.killTimer = setTimeout(() => this.killGroup('SIGKILL'), CLOSE_GRACE_MS);
      this.killTimer.unref();
    }
    this.term.dispose();
  }

  private killGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pty.pid, signal);
    } catch {
      try {
        this.pty.kill(signal);
      } catch {
        // Gone.
      }
    }
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}
