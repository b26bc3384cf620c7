import { z } from 'zod';
import { defineTool } from '../define-tool';
import type { ErrorCode } from '../errors';
import {
  TerminalInfo,
  TerminalOpenParams,
  TerminalReadParams,
  TerminalRef,
  TerminalSendParams,
  TerminalSendResult,
  terminalWaitScopes,
} from '../ops-terminals';
import { MachineRef } from './common';

const terminalCodes = [
  'machine_not_found',
  'ambiguous_machine',
  'machine_offline',
  'blocked_by_ceiling',
  'not_found',
  'unsupported',
  'timeout',
] as const satisfies readonly ErrorCode[];

const maskedCount = z.number().int().describe('How many secrets were replaced by *** before this reached you.');

export const terminalOpenInput = z.strictObject({ machine: MachineRef, ...TerminalOpenParams.shape });
export const terminalOpen = defineTool({
  name: 'terminal_open',
  title: 'Open a terminal',
  description:
    "Opens an interactive terminal (a pty running the machine's shell) and returns its id, tab title and host. Drive it with terminal_send, look at it with terminal_read and terminal_wait, end it with terminal_close. Keystrokes are not judged by command rules, so terminals exist only where the machine's ceiling allows them and never in allowlist mode. Idle terminals close after 30 minutes; a machine keeps at most 8.",
  input: terminalOpenInput,
  output: TerminalInfo,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  errors: [
    ...terminalCodes,
    'blocked_by_policy',
    'approval_denied',
    'approval_expired',
    'too_many_pending_approvals',
    'rate_limited',
  ],
  gated: true,
});

export const terminalSendInput = z.strictObject({ machine: MachineRef, ...TerminalSendParams.shape });
export const terminalSend = defineTool({
  name: 'terminal_send',
  title: 'Type into a terminal',
  description:
    'Sends text, then named keys (Enter, Tab, Escape, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Delete, F1-F12, C-a…C-z, M-x), then Enter when submit is set. Multi-line text is sent as a bracketed paste when the program supports it (paste: auto), so it is not run line by line.',
  input: terminalSendInput,
  output: TerminalSendResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  errors: terminalCodes,
});

export const terminalReadInput = z.strictObject({ machine: MachineRef, ...TerminalReadParams.shape });
export const terminalRead = defineTool({
  name: 'terminal_read',
  title: 'Read a terminal',
  description:
    "Returns the terminal's text: visible is the screen as rendered (including a full-screen program's alternate screen); recent is scrollback plus screen, the newest lines. Known secret formats are masked.",
  input: terminalReadInput,
  output: TerminalInfo.extend({
    text: z.string(),
    alternate_screen: z.boolean(),
    cursor: z.object({ x: z.number().int(), y: z.number().int() }),
    masked_count: maskedCount,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  errors: terminalCodes,
});

export const terminalWaitInput = z.strictObject({
  machine: MachineRef,
  ...TerminalRef.shape,
  pattern: z
    .string()
    .min(1)
    .max(512)
    .describe('Text to wait for (or a JavaScript regular expression with regex: true).'),
  regex: z.boolean().default(false),
  from: z
    .enum(terminalWaitScopes)
    .default('last_send')
    .describe(
      'last_send: output since the line of the last terminal_send (scrolled-away lines included); all: the whole scrollback.',
    ),
  timeout_s: z.number().int().min(1).max(60).default(30),
});
export const terminalWait = defineTool({
  name: 'terminal_wait',
  title: 'Wait for terminal output',
  description:
    'Waits until text (or a regular expression) appears in the terminal, searching the scrollback as well as the screen so fast output is not missed, for at most timeout_s (≤ 60). Matches against the masked text, like what terminal_read returns. Sends progress while waiting.',
  input: terminalWaitInput,
  output: z.object({
    matched: z.boolean(),
    /** The matched text (masked). */
    match: z.string().nullable(),
    /** The line holding the match, or the last lines when nothing matched (masked). */
    context: z.string(),
    exited: z.boolean(),
    waited_ms: z.number(),
    masked_count: maskedCount,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  errors: [...terminalCodes, 'invalid_params'],
});

export const terminalCloseInput = z.strictObject({ machine: MachineRef, ...TerminalRef.shape });
export const terminalClose = defineTool({
  name: 'terminal_close',
  title: 'Close a terminal',
  description: 'Ends the terminal and everything running in it (SIGHUP, then SIGKILL).',
  input: terminalCloseInput,
  output: z.object({ closed: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  errors: terminalCodes,
});

export const terminalTools = [terminalOpen, terminalSend, terminalRead, terminalWait, terminalClose] as const;
