import type { KV, NatsConnection } from 'nats';
import { z } from 'zod';

/** One gateway's entry: the public URL agents reach it on. */
const GatewayEntry = z.object({ url: z.url().max(2048) });

/** At most this many URLs go into a welcome (an agent tries them in turn). */
export const MAX_WELCOME_GATEWAYS = 16;

/**
 * The live gateways of a cluster (docs/design/cluster.md): a JetStream KV bucket `<prefix>-gateways`,
 * gatewayId → {url}, each gateway refreshing its own entry every third of the TTL and deleting it on a graceful
 * shutdown. A killed gateway's entry lapses with the bucket's TTL. The welcome names these URLs, so an agent knows
 * where else to go when its gateway goes away.
 */
export class GatewayRegistry {
  private readonly entries = new Map<string, { url: string; at: number }>();
  private refresher: NodeJS.Timeout | undefined;
  private stopWatch: (() => void) | undefined;

  private constructor(
    private readonly kv: KV,
    private readonly gatewayId: string,
    private readonly url: string,
    private readonly ttlMs: number,
  ) {}

  static async start(options: {
    nc: NatsConnection;
    prefix: string;
    gatewayId: string;
    /** This gateway's public URL (LETKITE_PUBLIC_URL). */
    url: string;
    ttlMs?: number;
    log?: (msg: string) => void;
  }): Promise<GatewayRegistry> {
    const ttl = options.ttlMs ?? 30_000;
    const kv = await options.nc.jetstream().views.kv(`${options.prefix}-gateways`, { ttl, history: 1 });
    const registry = new GatewayRegistry(kv, options.gatewayId, options.url, ttl);
    await registry.announce();
    await registry.watch();
    registry.refresher = setInterval(
      () => void registry.announce().catch((err) => options.log?.(`announcing this gateway failed: ${String(err)}`)),
      Math.max(50, Math.floor(ttl / 3)),
    );
    registry.refresher.unref();
    return registry;
  }

  private async announce(): Promise<void> {
    await this.kv.put(this.gatewayId, JSON.stringify({ url: this.url }));
    this.entries.set(this.gatewayId, { url: this.url, at: Date.now() });
  }

  private async watch(): Promise<void> {
    let ready!: () => void;
    const initialized = new Promise<void>((r) => {
      ready = r;
    });
    const watch = await this.kv.watch({ initializedFn: () => ready() });
    this.stopWatch = () => watch.stop();
    void (async () => {
      for await (const entry of watch) {
        if (entry.operation !== 'PUT') {
          this.entries.delete(entry.key);
          continue;
        }
        let value: unknown;
        try {
          value = entry.json();
        } catch {
          continue;
        }
        const parsed = GatewayEntry.safeParse(value);
        if (parsed.success) this.entries.set(entry.key, { url: parsed.data.url, at: entry.created.getTime() });
      }
    })();
    await initialized;
  }

  /** The public URLs of the live gateways, this one first, each once (several may share one URL behind a proxy). */
  urls(): string[] {
    const now = Date.now();
    const urls = [this.url];
    for (const [id, e] of this.entries) {
      if (id === this.gatewayId || now - e.at > this.ttlMs) continue;
      if (!urls.includes(e.url)) urls.push(e.url);
    }
    return urls.slice(0, MAX_WELCOME_GATEWAYS);
  }

  /** Graceful shutdown: leave the list at once, so no agent is sent here any more. */
  async close(): Promise<void> {
    clearInterval(this.refresher);
    this.stopWatch?.();
    await this.kv.delete(this.gatewayId).catch(() => undefined);
  }
}
