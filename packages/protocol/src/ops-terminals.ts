import { z } from 'zod';
import { agentOp } from './agent-op';
import { HandleId } from './ops-shell';

/**
 * Agent operations for terminals: a pty on the agent running the run-as account's shell, rendered by a headless
 * terminal emulator there, so the gateway only relays (and masks) text.
 */

export const TerminalOpenParams = z.object({
  cols: z.number().int().min(20).max(500).default(120),
  rows: z.number().int().min(5).max(200).default(40),
  cwd: z.string().max(4096).optional(),
});
export type TerminalOpenParams = z.infer<typeof TerminalOpenParams>;

export const TerminalInfo = z.object({
  terminal_id: z.string(),
  /** The tab title the program set (OSC 0/2), or the shell's name. Untrusted text. */
  title: z.string(),
  /** The machine's hostname. */
  host: z.string(),
  cols: z.number().int(),
  rows: z.number().int(),
  /** The shell has exited (its exit code, if known). */
  exited: z.boolean(),
  exit_code: z.number().int().nullable(),
});
export type TerminalInfo = z.infer<typeof TerminalInfo>;

export const pasteModes = ['auto', 'always', 'never'] as const;
export const PasteMode = z.enum(pasteModes);
export type PasteMode = z.infer<typeof PasteMode>;

export const TerminalSendParams = z.object({
  terminal_id: HandleId,
  text: z.string().max(100_000).optional(),
  /** Named keys sent after the text, in order (Enter, Tab, Up, C-c, Escape, F5, M-b …). */
  keys: z.array(z.string().min(1).max(16)).max(200).optional(),
  /** Press Enter after the text and keys. */
  submit: z.boolean().default(false),
  /**
   * auto: bracketed paste when the text has a line break and the program asked for bracketed paste; always;
   * never: typed as is. Pasted text has any paste markers of its own removed so it cannot end the paste early.
   */
  paste: PasteMode.default('auto'),
});
export type TerminalSendParams = z.infer<typeof TerminalSendParams>;

export const TerminalSendResult = z.object({ bytes: z.number().int(), pasted: z.boolean() });
export type TerminalSendResult = z.infer<typeof TerminalSendResult>;

export const terminalReadModes = ['visible', 'recent'] as const;
export const TerminalReadParams = z.object({
  terminal_id: HandleId,
  /** visible: the screen as rendered (the alternate screen when a full-screen program runs); recent: scrollback plus screen, newest `lines`. */
  mode: z.enum(terminalReadModes).default('visible'),
  lines: z.number().int().min(1).max(2000).default(200),
});
export type TerminalReadParams = z.infer<typeof TerminalReadParams>;

export const TerminalReadResult = TerminalInfo.extend({
  text: z.string(),
  alternate_screen: z.boolean(),
  cursor: z.object({ x: z.number().int(), y: z.number().int() }),
  /**
   * visible mode: when the screen's first row continues a line that starts above the screen, that line's earlier
   * rows. The gateway masks them with the screen (a secret wrapped across the top edge is seen whole), then drops
   * them: the AI is not shown them.
   */
  above: z.string().optional(),
});
export type TerminalReadResult = z.infer<typeof TerminalReadResult>;

export const terminalWaitScopes = ['last_send', 'all'] as const;
/**
 * Agent op `terminal_text`: the rendered text the gateway matches `terminal_wait` against (after masking, which
 * only the gateway does). Long-polls: answers once the terminal's output version passes `after_version`, or after
 * `max_wait_ms`.
 */
export const TerminalTextParams = z.object({
  terminal_id: HandleId,
  /** last_send: from the line the cursor was on at the last terminal_send; all: the whole scrollback. */
  from: z.enum(terminalWaitScopes).default('last_send'),
  after_version: z.number().int().min(-1).default(-1),
  max_wait_ms: z.number().int().min(0).max(60_000).default(0),
});
export type TerminalTextParams = z.infer<typeof TerminalTextParams>;

export const TerminalTextResult = z.object({
  text: z.string(),
  /** Increases with every piece of output the emulator has rendered. */
  version: z.number().int(),
  exited: z.boolean(),
});
export type TerminalTextResult = z.infer<typeof TerminalTextResult>;

export const TerminalRef = z.object({ terminal_id: HandleId });
export type TerminalRef = z.infer<typeof TerminalRef>;

/** The agent's answer to `terminal_close`. */
export const TerminalCloseResult = z.object({ closed: z.boolean() });
export type TerminalCloseResult = z.infer<typeof TerminalCloseResult>;

/** This module's agent operations (agent-ops.ts joins every module's into `agentOps`). */
export const terminalOps = {
  terminal_open: agentOp(TerminalOpenParams, TerminalInfo, 'call'),
  terminal_send: agentOp(TerminalSendParams, TerminalSendResult, 'call'),
  terminal_read: agentOp(TerminalReadParams, TerminalReadResult, 'call'),
  terminal_text: agentOp(TerminalTextParams, TerminalTextResult, 'call'),
  terminal_close: agentOp(TerminalRef, TerminalCloseResult, 'call'),
} as const;
