import { randomBytes } from 'node:crypto';
import type { Coordination, EventPayload } from '../coordination/coordination';

/** A new MCP session id: 128 random bits. */
export function newMcpSessionId(): string {
  return `mcs_${randomBytes(16).toString('base64url')}`;
}

/** Coordination topic: a fact about an MCP session changed (`session_id` plus the fact). */
export const MCP_SESSION_FACT_TOPIC = 'mcp.session-fact';

/** What one session said about itself after (or in) `initialize`: its log level, URL-mode elicitation. */
export interface SessionFacts {
  logLevel?: string;
  elicitationUrl?: boolean;
}

/** Bounded: one entry per live session is enough, and the oldest is the first to go. */
const MAX_SESSIONS = 50_000;

/**
 * Session facts kept beside the session row. Every request is served by a throw-away MCP server, so what a client
 * declared in `initialize` (its capabilities) or later (`logging/setLevel`) must outlive the request: each gateway
 * keeps them in memory and tells the others through the coordination events (ids and flags only). Delivery is at
 * most once and a gateway started later knows nothing of older sessions: a fact that was missed only means the
 * default (no log notifications, the pending answer instead of an elicitation), never more access.
 */
export class SessionFactBook {
  private readonly facts = new Map<string, SessionFacts>();
  private readonly off: () => void;

  constructor(private readonly coordination: Coordination) {
    this.off = coordination.events.subscribe(MCP_SESSION_FACT_TOPIC, (p: EventPayload) => {
      if (typeof p.session_id !== 'string') return;
      const update: SessionFacts = {};
      if (typeof p.log_level === 'string') update.logLevel = p.log_level;
      if (typeof p.elicitation_url === 'boolean') update.elicitationUrl = p.elicitation_url;
      this.merge(p.session_id, update);
    });
  }

  get(sessionId: string): SessionFacts {
    return this.facts.get(sessionId) ?? {};
  }

  /** Records a fact here at once and announces it to the other gateways. */
  async set(sessionId: string, update: SessionFacts): Promise<void> {
    this.merge(sessionId, update);
    const payload: EventPayload = { session_id: sessionId };
    if (update.logLevel !== undefined) payload.log_level = update.logLevel;
    if (update.elicitationUrl !== undefined) payload.elicitation_url = update.elicitationUrl;
    await this.coordination.events.publish(MCP_SESSION_FACT_TOPIC, payload).catch(() => undefined);
  }

  close(): void {
    this.off();
  }

  private merge(sessionId: string, update: SessionFacts): void {
    const next = { ...this.facts.get(sessionId), ...update };
    this.facts.delete(sessionId);
    this.facts.set(sessionId, next);
    if (this.facts.size > MAX_SESSIONS) {
      const oldest = this.facts.keys().next().value;
      if (oldest !== undefined) this.facts.delete(oldest);
    }
  }
}
