import {
  LetKiteError,
  type RequestContext,
  type TerminalInfo,
  type TerminalReadResult,
  type TerminalSendResult,
  type TerminalTextResult,
} from '@letkite/protocol';
import {
  TerminalOpenParams,
  TerminalReadParams,
  TerminalRef,
  TerminalSendParams,
  TerminalTextParams,
} from '@letkite/protocol/ops-terminals';
import type { z } from 'zod';
import type { CeilingState } from '../ceiling/ceiling-source';
import { prepareLaunch } from '../executors/prepare-launch';
import { authorizeGatedTool, isAllowlist } from '../guard/authorize-command';
import { type RequestPolicy, requestPolicy } from '../guard/request-policy';
import type { TerminalSession } from './terminal';

/** A terminal nobody used for this long is closed. */
export const TERMINAL_IDLE_MS = 30 * 60_000;
/** At most this many terminals per machine. */
export const MAX_TERMINALS = 8;
/** The interactive shell a terminal runs. */
export const TERMINAL_SHELL = ['/bin/bash', '-i'];

/**
 * Whether this request may have a terminal here. Keystrokes cannot be judged by command rules, so a terminal
 * needs the ceiling's `terminals = true`, a shell level above `off`, and shell mode (never allowlist mode).
 */
export function assertTerminalsAllowed(rp: RequestPolicy): void {
  if (isAllowlist(rp.clamped)) {
    throw new LetKiteError('unsupported', 'terminals do not exist in allowlist mode', { layer: 'allowlist' });
  }
  if (!rp.ceiling.terminals) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      "this machine's ceiling does not allow terminals (terminals = false)",
      {
        layer: 'ceiling',
        key: 'terminals',
      },
    );
  }
  if (!rp.clamped.terminals) {
    const byCeiling = rp.ceiling.shell === 'off';
    throw new LetKiteError(
      byCeiling ? 'blocked_by_ceiling' : 'blocked_by_policy',
      'terminals need a shell, and shell is "off"',
      {
        layer: byCeiling ? 'ceiling' : 'policy',
        key: 'shell',
      },
    );
  }
}

function parse<T extends z.ZodType>(schema: T, raw: unknown): z.infer<T> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new LetKiteError('invalid_params', 'malformed terminal parameters');
  return parsed.data;
}

/**
 * The agent's terminals. Each belongs to the caller that opened it (`context.actor`); others get `not_found`.
 * Every operation re-checks that terminals are still allowed, so a ceiling edit applies at once.
 */
export class TerminalManager {
  private readonly terminals = new Map<string, TerminalSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly idleMs = TERMINAL_IDLE_MS) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, idleMs));
    this.sweeper.unref();
  }

  async open(raw: unknown, context: RequestContext, ceiling: CeilingState): Promise<TerminalInfo> {
    const params = parse(TerminalOpenParams, raw);
    const rp = requestPolicy(context.policy, ceiling);
    assertTerminalsAllowed(rp);
    authorizeGatedTool(rp, 'terminal_open', context);
    this.sweep();
    if (this.terminals.size >= MAX_TERMINALS) {
      throw new LetKiteError('rate_limited', `this machine already has ${MAX_TERMINALS} terminals`, {
        max: MAX_TERMINALS,
      });
    }
    // node-pty's addon and xterm load with the first terminal: an agent that never opens one never pays for them
    // (bench/memory).
    const { TerminalSession } = await import('./terminal');
    const launch = await prepareLaunch(rp, TERMINAL_SHELL, { cwd: params.cwd });
    let session: TerminalSession;
    try {
      session = new TerminalSession(context.actor ?? '', launch, params.cols, params.rows);
    } catch (err) {
      launch.release();
      throw new LetKiteError('internal', `the terminal could not start: ${(err as Error).message}`);
    }
    this.terminals.set(session.id, session);
    // Give the shell a moment to draw its prompt, so the first read shows something.
    await session.waitForOutput(0, 1000);
    await session.settle();
    return session.info();
  }

  async send(raw: unknown, context: RequestContext, ceiling: CeilingState): Promise<TerminalSendResult> {
    const params = parse(TerminalSendParams, raw);
    const session = this.find(params.terminal_id, context, ceiling);
    return session.send(params);
  }

  async read(raw: unknown, context: RequestContext, ceiling: CeilingState): Promise<TerminalReadResult> {
    const params = parse(TerminalReadParams, raw);
    const session = this.find(params.terminal_id, context, ceiling);
    await session.settle();
    return session.read(params.mode, params.lines);
  }

  async text(
    raw: unknown,
    context: RequestContext,
    ceiling: CeilingState,
    signal: AbortSignal,
  ): Promise<TerminalTextResult> {
    const params = parse(TerminalTextParams, raw);
    const session = this.find(params.terminal_id, context, ceiling);
    await session.waitForOutput(params.after_version, params.max_wait_ms, signal);
    await session.settle();
    session.lastUsed = Date.now();
    return { text: session.text(params.from), version: session.outputVersion, exited: session.ended };
  }

  close(raw: unknown, context: RequestContext, ceiling: CeilingState): { closed: boolean } {
    const { terminal_id } = parse(TerminalRef, raw);
    const session = this.find(terminal_id, context, ceiling);
    session.close();
    this.terminals.delete(terminal_id);
    return { closed: true };
  }

  /** Closes every terminal (agent shutdown). */
  closeAll(): void {
    clearInterval(this.sweeper);
    for (const t of this.terminals.values()) t.close();
    this.terminals.clear();
  }

  private find(id: string, context: RequestContext, ceiling: CeilingState): TerminalSession {
    assertTerminalsAllowed(requestPolicy(context.policy, ceiling));
    const t = this.terminals.get(id);
    if (!t || t.owner !== (context.actor ?? '')) throw new LetKiteError('not_found', `no terminal "${id}"`);
    return t;
  }

  private sweep(now = Date.now()): void {
    for (const [id, t] of this.terminals) {
      if (now - t.lastUsed > this.idleMs) {
        t.close();
        this.terminals.delete(id);
      }
    }
  }
}
