import { LetKiteError, type RequestContext } from '@letkite/protocol';
import type { AgentSession } from './agent-session';
import type { AgentHub, CallOptions } from './types';

/** The embedded hub: agent sockets held by this process. */
export class LocalHub implements AgentHub {
  private readonly sessions = new Map<string, AgentSession>();

  /** Registers a newly authenticated session; an older socket for the same machine is closed (one per machine). */
  attach(session: AgentSession): void {
    const previous = this.sessions.get(session.machineId);
    this.sessions.set(session.machineId, session);
    previous?.close(4000, 'replaced by a newer connection');
  }

  /** Forgets a session that closed, unless a newer one already replaced it. */
  detach(session: AgentSession): void {
    if (this.sessions.get(session.machineId) === session) this.sessions.delete(session.machineId);
  }

  /** How many agents hold a socket here (the agents-online gauge). */
  get onlineCount(): number {
    return this.sessions.size;
  }

  isOnline(machineId: string): boolean {
    return this.sessions.has(machineId);
  }

  call(
    machineId: string,
    op: string,
    params: unknown,
    context: RequestContext,
    options: CallOptions,
  ): Promise<unknown> {
    const session = this.sessions.get(machineId);
    if (!session) return Promise.reject(new LetKiteError('machine_offline', `machine "${machineId}" is offline`));
    return session.call(op, params, context, options);
  }

  async close(): Promise<void> {
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
  }
}
