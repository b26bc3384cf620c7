import { createHash } from 'node:crypto';
import { LetKiteError } from '@letkite/protocol';
import type { Principal } from '../../auth/principal';
import type { Coordination, EventPayload } from '../../coordination/coordination';
import { type ResourceContext, readResource } from './read-resource';

/** Coordination topic: a session subscribed to (`on: true`) or unsubscribed from a resource (`session_id`, `uri`). */
export const RESOURCE_SUBSCRIPTION_TOPIC = 'mcp.resource-subscription';
/** How often the gateway holding a session's stream looks for changes of what it subscribed to. */
export const DEFAULT_WATCH_MS = 2_000;
/** At most this many subscriptions per session (each costs a read per tick). */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 32;

/** Sessions with subscriptions remembered per gateway at most. */
const MAX_SESSIONS = 50_000;

/** A stream of this gateway on which a session receives server notifications (GET /mcp, a legacy SSE stream). */
interface Channel {
  principal: Principal;
  notify: (uri: string) => Promise<void>;
  close: () => void;
}

/**
 * `resources/subscribe`: which session watches which URIs (every gateway hears of it through the coordination
 * events, since the subscribe request may reach another gateway than the session's stream), and, on the gateway
 * holding the stream, a watcher that re-reads each subscribed resource — as the session's principal, with every
 * check of the tool it is read through, but without an audit row per look — and sends
 * `notifications/resources/updated` when what it reads changes (a terminal's screen, a job's output, a machine
 * coming or going: the store and the hub's presence are the cluster's, so changes made anywhere are seen). What is
 * compared is a hash of the masked text; a resource that becomes unreadable (revoked, machine gone) is a change too.
 */
export class ResourceSubscriptions {
  private readonly subscribed = new Map<string, Set<string>>();
  private readonly channels = new Map<string, Channel>();
  private readonly seen = new Map<string, string>();
  private readonly off: () => void;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(
    private readonly coordination: Coordination,
    /** A resource context for a principal whose tool runs write no audit row (the watcher's looks). */
    private readonly quietContext: (principal: Principal) => ResourceContext,
    private readonly watchMs = DEFAULT_WATCH_MS,
  ) {
    this.off = coordination.events.subscribe(RESOURCE_SUBSCRIPTION_TOPIC, (p: EventPayload) => {
      if (typeof p.session_id !== 'string' || typeof p.uri !== 'string') return;
      this.apply(p.session_id, p.uri, p.on === true);
    });
  }

  /** Records (and announces) a subscription; the caller checked the resource is readable. */
  async subscribe(sessionId: string, uri: string): Promise<void> {
    const mine = this.subscribed.get(sessionId);
    if (!mine?.has(uri) && (mine?.size ?? 0) >= MAX_SUBSCRIPTIONS_PER_SESSION) {
      throw new LetKiteError('rate_limited', `at most ${MAX_SUBSCRIPTIONS_PER_SESSION} subscriptions per session`);
    }
    this.apply(sessionId, uri, true);
    await this.coordination.events
      .publish(RESOURCE_SUBSCRIPTION_TOPIC, { session_id: sessionId, uri, on: true })
      .catch(() => undefined);
  }

  async unsubscribe(sessionId: string, uri: string): Promise<void> {
    this.apply(sessionId, uri, false);
    await this.coordination.events
      .publish(RESOURCE_SUBSCRIPTION_TOPIC, { session_id: sessionId, uri, on: false })
      .catch(() => undefined);
  }

  /** A stream of `sessionId` opened here; returns its removal. Only one per session: a newer one replaces it. */
  addChannel(sessionId: string, channel: Channel): () => void {
    this.channels.get(sessionId)?.close();
    this.channels.set(sessionId, channel);
    this.timer ??= setInterval(() => void this.tick(), this.watchMs);
    this.timer.unref();
    return () => {
      if (this.channels.get(sessionId) === channel) this.channels.delete(sessionId);
      if (this.channels.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Closes the stream of one session and forgets its subscriptions (the session ended). */
  closeSession(sessionId: string): void {
    this.channels.get(sessionId)?.close();
    for (const uri of this.subscribed.get(sessionId) ?? []) this.seen.delete(`${sessionId} ${uri}`);
    this.subscribed.delete(sessionId);
  }

  /** Closes the streams whose principal matches (revocation). */
  closeWhere(matches: (p: Principal) => boolean): void {
    for (const c of [...this.channels.values()]) if (matches(c.principal)) c.close();
  }

  close(): void {
    this.off();
    clearInterval(this.timer);
    this.timer = undefined;
    for (const c of [...this.channels.values()]) c.close();
  }

  private apply(sessionId: string, uri: string, on: boolean): void {
    let set = this.subscribed.get(sessionId);
    if (on) {
      if (!set) {
        set = new Set();
        this.subscribed.set(sessionId, set);
        // Bounded: a session that ended on another gateway is only forgotten here when the map is full.
        if (this.subscribed.size > MAX_SESSIONS) {
          const oldest = this.subscribed.keys().next().value;
          if (oldest !== undefined && oldest !== sessionId) this.subscribed.delete(oldest);
        }
      }
      set.add(uri);
    } else {
      set?.delete(uri);
      if (set?.size === 0) this.subscribed.delete(sessionId);
      this.seen.delete(`${sessionId} ${uri}`);
    }
  }

  /** One look at every subscribed resource of the sessions whose stream is here. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      for (const [sessionId, channel] of this.channels) {
        const uris = this.subscribed.get(sessionId);
        if (!uris) continue;
        const ctx = this.quietContext(channel.principal);
        for (const uri of uris) {
          const key = `${sessionId} ${uri}`;
          const now = await this.fingerprint(ctx, uri);
          const before = this.seen.get(key);
          this.seen.set(key, now);
          if (before !== undefined && before !== now) await channel.notify(uri).catch(() => undefined);
        }
      }
    } finally {
      this.ticking = false;
    }
  }

  private async fingerprint(ctx: ResourceContext, uri: string): Promise<string> {
    try {
      const r = await readResource(ctx, uri);
      // A machine's last_seen_at moves with its heartbeat writes (about once a minute): not a change a subscriber
      // of the machine list waits for (online, coming, going, renamed are).
      const text = r.mimeType === 'application/json' ? r.text.replace(/"last_seen_at": ("[^"]*"|null)/g, '') : r.text;
      return createHash('sha256').update(text).digest('base64url');
    } catch (err) {
      // A resource that became unreadable is a state like any other (the next read tells the client why).
      return `error:${err instanceof Error ? err.message.slice(0, 200) : 'unreadable'}`;
    }
  }
}
