import { DEFAULT_CEILING_PATH } from '@letkite/ceiling';
import { type AgentFrame, LetKiteError, type RequestFrame, toLetKiteError } from '@letkite/protocol';
import { CeilingSource, type CeilingState } from './ceiling/ceiling-source';
import { GatewayConnection } from './connection';
import { CommandRulesIdle, DEFAULT_COMMAND_RULES_IDLE_MS } from './guard/command-rules-idle';
import { agentProtectedPaths } from './guard/protected-paths';
import { ApprovalVerifier } from './guard/verify-approval';
import type { ScreenConfig } from './gui/display';
import { AgentOps } from './ops';
import type { RequestStream } from './request-stream';
import { type AgentState, saveState } from './state';
import { TempJournal } from './transfers/temp-journal';

export interface AgentOptions {
  log?: (msg: string) => void;
  /** The machine's ceiling file (default /etc/letkite/ceiling.toml). */
  ceilingPath?: string;
  /** The agent's state directory: where unfinished transfers are remembered so a restart can clean them up. */
  stateDir?: string;
  /**
   * More paths to keep out of reach of every tool besides the agent's own (ceiling, state): `letkite start` names
   * the gateway's data directory here (guard/protected-paths.ts).
   */
  protectedPaths?: readonly string[];
  /** The X11 display the screen tools drive (gui/display.ts); none: they answer `unsupported`. */
  screen?: ScreenConfig;
  /**
   * How long the bash grammar is kept after the last request (default 60 s; null: for good); the next request
   * loads it again (guard/command-rules-idle.ts).
   */
  commandRulesIdleMs?: number | null;
}

/** The report the gateway shows on the dashboard and in machines_list. */
export function ceilingReport(state: CeilingState): AgentFrame {
  return state.source === 'error'
    ? { type: 'report', ceiling: null, ceiling_source: 'error', ceiling_error: state.error.slice(0, 4000) }
    : { type: 'report', ceiling: state.ceiling, ceiling_source: state.source };
}

/**
 * One log message as one line: requests carry text the gateway chose (ids, ops, paths, actors), and a line break
 * or a terminal escape in it must not forge another line of the agent's log. Control, bidi and line-separator
 * characters are written as `\u{…}`.
 */
export function logLine(msg: string): string {
  return msg.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    return `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`;
  });
}

/** The agent process: one connection to the gateway and the operations it serves. */
export class Agent {
  readonly connection: GatewayConnection;
  readonly ceiling: CeilingSource;
  private readonly log: (msg: string) => void;
  private readonly transfers: TempJournal;
  private readonly approvals: ApprovalVerifier;
  private readonly ops: AgentOps;
  private readonly commandRules: CommandRulesIdle;

  constructor(state: AgentState, options: AgentOptions = {}) {
    const sink = options.log ?? ((msg: string) => console.error(`[agent] ${msg}`));
    this.log = (msg) => sink(logLine(msg));
    this.transfers = new TempJournal(options.stateDir ?? null);
    this.approvals = new ApprovalVerifier(state.machine_id, options.stateDir ?? null);
    this.commandRules = new CommandRulesIdle(
      options.commandRulesIdleMs === undefined ? DEFAULT_COMMAND_RULES_IDLE_MS : options.commandRulesIdleMs,
    );
    // Each group of ops (files, jobs, terminals, …) is loaded on its first request (ops/features.ts).
    this.ops = new AgentOps({
      stateDir: options.stateDir ?? null,
      log: this.log,
      transfers: this.transfers,
      ...(options.screen ? { screen: options.screen } : {}),
    });
    const uid = process.getuid?.() ?? 0;
    const ceilingPath = options.ceilingPath ?? DEFAULT_CEILING_PATH;
    const protect = agentProtectedPaths({ ceilingPath, stateDir: options.stateDir, extra: options.protectedPaths });
    this.ceiling = new CeilingSource(ceilingPath, uid === 0 ? [0] : [0, uid], this.log, { protect });
    this.connection = new GatewayConnection(state, {
      log: this.log,
      onConnected: (send) => send(ceilingReport(this.ceiling.current())),
      // The cluster's other gateways go into the state file, so an agent restarted while its gateway is down still
      // knows where else to go. Only that field changes; the pins stay as they were at join.
      onGateways: (gateways) => {
        if (!options.stateDir) return;
        try {
          saveState(options.stateDir, { ...state, gateways: [...gateways] });
        } catch (err) {
          this.log(`keeping the cluster's gateways in the state file failed: ${String(err)}`);
        }
      },
      onRequest: (frame, send, signal, stream) => this.handle(frame, send, signal, stream),
    });
  }

  /** Loads the command parser (a missing grammar fails here), reports the ceiling in force, dials the gateway. */
  async start(): Promise<void> {
    (await this.commandRules.hold())();
    this.transfers.cleanStale(this.log);
    const initial = this.ceiling.current();
    if (initial.source === 'defaults') this.log(`no ceiling at ${initial.path}: using the documented defaults`);
    if (initial.source === 'error') this.log(`ceiling ${initial.path}: FAILING CLOSED: ${initial.error}`);
    this.ceiling.watch((next) => this.connection.send(ceilingReport(next)));
    this.connection.start();
  }

  stop(): Promise<void> {
    this.commandRules.close();
    this.ceiling.close();
    this.ops.close();
    return this.connection.stop();
  }

  private async handle(
    frame: RequestFrame,
    send: (f: AgentFrame) => void,
    signal: AbortSignal,
    stream: RequestStream,
  ): Promise<void> {
    let release: (() => void) | undefined;
    try {
      // Before anything judges a command in it, and until it ends: the grammar is not let go under a request.
      release = await this.commandRules.hold();
      // A proof of approval is checked (and used up) before anything else looks at the request.
      const current = this.ceiling.current();
      const checked = this.approvals.check(frame, current.source === 'error' ? null : current.ceiling);
      const result = await this.run(checked, send, signal, stream);
      send({ type: 'response', id: frame.id, result });
    } catch (err) {
      const e = toLetKiteError(err);
      if (!(err instanceof LetKiteError)) this.log(`request ${frame.id} (${frame.op}) failed: ${String(err)}`);
      else this.log(`refused ${frame.op} (${frame.context.actor ?? 'unknown'}): ${e.code}: ${e.message}`);
      send({ type: 'error', id: frame.id, error: e.toPayload() });
    } finally {
      release?.();
    }
  }

  private run(
    frame: RequestFrame,
    send: (f: AgentFrame) => void,
    signal: AbortSignal,
    stream: RequestStream,
  ): Promise<unknown> {
    // The ceiling is re-read (if it changed) for every request, so an edit applies at once.
    const ceiling = this.ceiling.current();
    const { id, op, params, context } = frame;
    return this.ops.dispatch({ id, op, params, context, ceiling, send, signal, stream });
  }
}
