import type { ClampedPolicy } from '@letkite/ceiling';
import {
  LetKiteError,
  TerminalInfo,
  TerminalReadResult,
  TerminalSendResult,
  TerminalTextResult,
  terminalClose,
  terminalOpen,
  terminalRead,
  terminalSend,
  terminalWait,
} from '@letkite/protocol';
import { z } from 'zod';
import { policyToolReason, requireApproval } from '../../approvals/gate';
import { type MachineCall, prepareMachineCall, refuseInAllowlistMode } from '../../machines/prepare-machine-call';
import { compileRedactionPatterns, type OutputMasker } from '../../output';
import { refuseUnreachableCwd } from '../../policy/check-cwd';
import { reportedCeiling } from '../../policy/resolve-policy';
import type { Machine } from '../../store/types';
import { defineHandler, outputMaskerFor, type ToolCallContext } from '../tool-handler';

/** terminal_wait searches at most the newest this-many characters of (masked) text. */
const WAIT_WINDOW_CHARS = 256 * 1024;
/** Text before that window masked with it, so a secret the window's start cuts through is seen whole. */
const WAIT_MARGIN_CHARS = 16 * 1024;

/**
 * The gateway's early refusal (the agent checks again against its real ceiling): terminals need shell mode, the
 * machine's `terminals = true`, and a shell level above off.
 */
function refuseWithoutTerminals(machine: Machine, clamped: ClampedPolicy): void {
  refuseInAllowlistMode(clamped, 'terminals');
  if (clamped.terminals) return;
  const ceiling = reportedCeiling(machine);
  if (ceiling && !ceiling.terminals) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      `machine "${machine.name}" does not allow terminals (terminals = false)`,
      {
        layer: 'ceiling',
        key: 'terminals',
      },
    );
  }
  const byCeiling = ceiling?.shell === 'off';
  throw new LetKiteError(
    byCeiling ? 'blocked_by_ceiling' : 'blocked_by_policy',
    'terminals need a shell, and shell is "off"',
    {
      layer: byCeiling ? 'ceiling' : 'policy',
      key: 'shell',
    },
  );
}

async function terminalCall(ctx: ToolCallContext, ref: string): Promise<MachineCall> {
  const m = await prepareMachineCall(ctx, ref);
  refuseWithoutTerminals(m.machine, m.clamped);
  return m;
}

/** Titles are set by whatever runs in the terminal: masked like any other output. */
function maskTitle<T extends { title: string }>(info: T, masker: OutputMasker): T {
  return { ...info, title: masker.mask(info.title).text };
}

/**
 * `terminal_open`: keystrokes are not judged by command rules, so only the policy's `approval.tools` can make it
 * wait for a human.
 */
export const terminalOpenHandler = defineHandler(terminalOpen, async (input, ctx) => {
  const m = await terminalCall(ctx, input.machine);
  refuseUnreachableCwd(m.policy, m.clamped, input.cwd);
  const { machine: _machine, ...params } = input;
  const needsHuman = policyToolReason(m.policy, 'terminal_open');
  ctx.audit.decision = needsHuman ? 'approve' : 'allow';
  const approved = needsHuman
    ? (
        await requireApproval(ctx, {
          tool: 'terminal_open',
          machine: m.machine,
          policy: m.policy,
          args: input,
          reason: needsHuman,
          agent: { op: 'terminal_open', params, machines: [m.machine] },
        })
      ).approved
    : false;
  const info = TerminalInfo.parse(await m.call('terminal_open', params, { approved }));
  ctx.audit.details = { ...ctx.audit.details, terminal_id: info.terminal_id, cols: info.cols, rows: info.rows };
  return maskTitle(info, await outputMaskerFor(ctx));
});

export const terminalSendHandler = defineHandler(terminalSend, async (input, ctx) => {
  // Typed text can be a password the person asked the AI to enter: the audit keeps its size, not its content.
  ctx.audit.details = { terminal_id: input.terminal_id, text_chars: input.text?.length ?? 0, keys: input.keys ?? [] };
  const m = await terminalCall(ctx, input.machine);
  const { machine: _machine, ...params } = input;
  return TerminalSendResult.parse(await m.call('terminal_send', params));
});

export const terminalReadHandler = defineHandler(terminalRead, async (input, ctx) => {
  ctx.audit.details = { terminal_id: input.terminal_id, mode: input.mode };
  const m = await terminalCall(ctx, input.machine);
  const { machine: _machine, ...params } = input;
  const { above = '', ...screen } = TerminalReadResult.parse(await m.call('terminal_read', params));
  const masker = await outputMaskerFor(ctx);
  // The screen's first row may continue a line from above it: masked with that line's start, which is then cut off.
  const shown =
    above === '' ? null : masker.window(`${above}${screen.text}`, above.length, above.length + screen.text.length);
  const text = masker.prepare(shown?.text ?? screen.text);
  return {
    ...maskTitle(screen, masker),
    text: text.text,
    masked_count: text.masked_count + (shown?.masked_count ?? 0),
  };
});

/** A wait pattern: literal text, or a regular expression held to the same rules as account redaction patterns. */
function matcher(pattern: string, regex: boolean): (text: string) => string | null {
  if (!regex) {
    return (text) => (text.includes(pattern) ? pattern : null);
  }
  let re: RegExp;
  try {
    [re] = compileRedactionPatterns([pattern]) as [RegExp];
  } catch (err) {
    const reason = err instanceof LetKiteError ? err.message.replace(/^redaction pattern #1 /, '') : 'is not usable';
    throw new LetKiteError('invalid_params', `the wait pattern ${reason}`);
  }
  const once = new RegExp(re.source, re.flags.replace('g', ''));
  return (text) => once.exec(text)?.[0] ?? null;
}

function lineAround(text: string, index: number): string {
  const start = text.lastIndexOf('\n', index) + 1;
  const end = text.indexOf('\n', index);
  return text.slice(start, end < 0 ? text.length : end);
}

/**
 * `terminal_wait`: long-polls the agent for the rendered text (from the last send, or all scrollback) and matches
 * the pattern against the text *after masking*, so a pattern cannot probe for a secret the AI is not shown.
 */
export const terminalWaitHandler = defineHandler(terminalWait, async (input, ctx) => {
  ctx.audit.details = { terminal_id: input.terminal_id, from: input.from };
  const match = matcher(input.pattern, input.regex);
  const m = await terminalCall(ctx, input.machine);
  const masker = await outputMaskerFor(ctx);
  const started = Date.now();
  const deadline = started + input.timeout_s * 1000;
  let version = -1;
  let last = { text: '', masked: 0, exited: false };
  for (;;) {
    const remaining = Math.max(0, deadline - Date.now());
    const r = TerminalTextResult.parse(
      await m.call(
        'terminal_text',
        {
          terminal_id: input.terminal_id,
          from: input.from,
          after_version: version,
          max_wait_ms: version < 0 ? 0 : Math.min(remaining, 60_000),
        },
        { timeoutMs: remaining + 15_000 },
      ),
    );
    version = r.version;
    const from = Math.max(0, r.text.length - WAIT_WINDOW_CHARS);
    const margin = Math.max(0, from - WAIT_MARGIN_CHARS);
    const masked = masker.window(r.text.slice(margin), from - margin, r.text.length - margin, {
      cutAtStart: margin > 0,
    });
    last = { text: masked.text, masked: masked.masked_count, exited: r.exited };
    const found = match(masked.text);
    if (found !== null) {
      const at = masked.text.indexOf(found);
      return {
        matched: true,
        match: found,
        context: lineAround(masked.text, at),
        exited: r.exited,
        waited_ms: Date.now() - started,
        masked_count: masked.masked_count,
      };
    }
    if (r.exited || Date.now() >= deadline || ctx.signal.aborted) break;
    await ctx.progress(Date.now() - started, input.timeout_s * 1000, 'waiting for terminal output');
  }
  const tail = masker.prepare(last.text, { maxLines: 20, maxChars: 4000 });
  return {
    matched: false,
    match: null,
    context: tail.text,
    exited: last.exited,
    waited_ms: Date.now() - started,
    masked_count: tail.masked_count,
  };
});

export const terminalCloseHandler = defineHandler(terminalClose, async (input, ctx) => {
  ctx.audit.details = { terminal_id: input.terminal_id };
  const m = await terminalCall(ctx, input.machine);
  return z.object({ closed: z.boolean() }).parse(await m.call('terminal_close', { terminal_id: input.terminal_id }));
});
