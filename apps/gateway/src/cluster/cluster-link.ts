import { LetKiteError } from '@letkite/protocol';
import { connect, type NatsConnection } from 'nats';
import { NatsHub } from '../hub/nats-hub';
import { GatewayRegistry } from './gateway-registry';

/**
 * What cluster mode adds to a gateway (docs/design/cluster.md): its own NATS connection for the hub (call routing,
 * output and transfer data; coordination keeps a connection of its own, so bulk data never delays an event), the
 * NatsHub on it, and this gateway's entry in the registry of live gateways once it knows its public URL.
 */
export class ClusterLink {
  private registry: GatewayRegistry | null = null;

  private constructor(
    readonly nc: NatsConnection,
    readonly hub: NatsHub,
    private readonly options: { gatewayId: string; prefix: string; log: (msg: string) => void; ttlMs?: number },
  ) {}

  static async connect(options: {
    url: string;
    prefix: string;
    gatewayId: string;
    log: (msg: string) => void;
    /** Presence and registry entries lapse after this long without a refresh (default 30 s). */
    ttlMs?: number;
  }): Promise<ClusterLink> {
    const nc = await connect({
      servers: options.url.split(',').map((s) => s.trim()),
      name: `letkite-gateway-${options.gatewayId}`,
      // A gateway outlives NATS restarts: keep trying, calls to other gateways fail as offline meanwhile.
      maxReconnectAttempts: -1,
    }).catch((err: unknown) => {
      // The URL may carry credentials: name the failure, not the URL.
      throw new LetKiteError('internal', `cannot connect to NATS (LETKITE_NATS_URL): ${(err as Error).message}`);
    });
    const maxPayload = nc.info?.max_payload ?? 0;
    options.log(
      `cluster: gateway ${options.gatewayId}, NATS max_payload ${maxPayload} bytes (larger messages go in parts)`,
    );
    const hub = await NatsHub.start({
      nc,
      gatewayId: options.gatewayId,
      prefix: options.prefix,
      presenceTtlMs: options.ttlMs,
      log: options.log,
    });
    return new ClusterLink(nc, hub, options);
  }

  /** Joins the registry of live gateways under this public URL (agents are told about it from now on). */
  async announce(publicUrl: string): Promise<void> {
    this.registry = await GatewayRegistry.start({
      nc: this.nc,
      prefix: this.options.prefix,
      gatewayId: this.options.gatewayId,
      url: publicUrl,
      ttlMs: this.options.ttlMs,
      log: this.options.log,
    });
  }

  /** The live gateways' public URLs, this one first: what the welcome names. */
  gateways(): string[] {
    return this.registry?.urls() ?? [];
  }

  /** NATS answers (for /readyz). */
  async ping(): Promise<void> {
    if (this.nc.isClosed()) throw new Error('closed');
    await this.nc.flush();
  }

  /** Graceful shutdown, first step: leave the registry so reconnecting agents are sent elsewhere. */
  async leave(): Promise<void> {
    await this.registry?.close();
    this.registry = null;
  }

  /** Last step, after the hub closed its sockets: the connection goes. */
  async close(): Promise<void> {
    await this.leave();
    await this.nc.drain().catch(() => undefined);
  }
}
