import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { LetKiteError, type RequestContext, type TunnelInfo, type TunnelKind } from '@letkite/protocol';
import type { AgentHub } from '../hub/types';
import type { AuditEventInput } from '../store/types';
import { TunnelConnection } from './tunnel-connection';

/** Which ports tcp tunnels listen on, and where. `null` ports: any free port the system hands out. */
export interface TunnelListenConfig {
  host: string;
  ports: { low: number; high: number } | null;
}

/** Who opened a tunnel: only this account sees it, and it lives only as long as this credential does. */
export interface TunnelOwner {
  accountId: string;
  credentialId: string;
  credentialKind: 'api_token' | 'connection';
  actor: string;
}

export interface OpenTunnelRequest {
  owner: TunnelOwner;
  machineId: string;
  target: string;
  host: string;
  port: number;
  kind: TunnelKind;
  ttlS: number;
  /** The agent's context for every connection (the policy it re-checks against its ceiling). */
  context: RequestContext;
}

/** One open tunnel. */
export interface Tunnel extends OpenTunnelRequest {
  id: string;
  openedAt: Date;
  expiresAt: Date;
  connections: Set<TunnelConnection>;
  server: Server | null;
  tcp?: { host: string; port: number };
}

export type TunnelCloseReason = 'closed' | 'expired' | 'revoked' | 'machine_offline' | 'gateway_shutdown';

export interface TunnelRegistryDeps {
  hub: AgentHub;
  listen: TunnelListenConfig;
  /** The gateway's public URL: http tunnels are served under `<publicUrl>/t/<id>/`. */
  publicUrl: string;
  /** Whether the credential that opened a tunnel still works (not revoked, not expired, its person still a member). */
  credentialLive: (owner: TunnelOwner) => Promise<boolean>;
  appendAudit: (event: AuditEventInput) => Promise<unknown>;
  now: () => Date;
  log: (msg: string) => void;
  /** How often tunnels are checked against revocation and their machine's presence (default 2 s). */
  watchEveryMs?: number;
}

/** Most tunnels one account may hold open on a gateway, and connections one tunnel carries at once. */
export const MAX_TUNNELS_PER_ACCOUNT = 32;
export const MAX_CONNECTIONS_PER_TUNNEL = 32;

/**
 * The tunnels this gateway process holds: they live in memory with their listeners, like running transfers, so a
 * gateway restart closes them (and tunnels_list on another gateway of a cluster does not show them). A tunnel
 * closes at its expiry, on tunnel_close, when the credential that opened it stops working and when its machine
 * goes offline; every close cuts its connections and writes a `tunnel.close` audit row with the reason.
 */
export class TunnelRegistry {
  private readonly tunnels = new Map<string, Tunnel>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly watcher: NodeJS.Timeout;
  private watching = false;

  constructor(private readonly deps: TunnelRegistryDeps) {
    this.watcher = setInterval(() => void this.watch(), deps.watchEveryMs ?? 2000);
    this.watcher.unref();
  }

  get(id: string): Tunnel | undefined {
    return this.tunnels.get(id);
  }

  list(accountId: string): Tunnel[] {
    return [...this.tunnels.values()].filter((t) => t.owner.accountId === accountId);
  }

  info(t: Tunnel): TunnelInfo {
    return {
      tunnel_id: t.id,
      machine: t.machineId,
      target: t.target,
      kind: t.kind,
      expires_at: t.expiresAt.toISOString(),
      ...(t.kind === 'http' ? { url: `${this.deps.publicUrl.replace(/\/$/, '')}/t/${t.id}/` } : {}),
      ...(t.tcp ? { tcp: t.tcp } : {}),
      connections: t.connections.size,
    };
  }

  async open(request: OpenTunnelRequest): Promise<Tunnel> {
    if (this.list(request.owner.accountId).length >= MAX_TUNNELS_PER_ACCOUNT) {
      throw new LetKiteError('rate_limited', `at most ${MAX_TUNNELS_PER_ACCOUNT} tunnels may be open at once`, {
        max: MAX_TUNNELS_PER_ACCOUNT,
      });
    }
    const openedAt = this.deps.now();
    const tunnel: Tunnel = {
      ...request,
      id: `tun_${randomBytes(12).toString('base64url')}`,
      openedAt,
      expiresAt: new Date(openedAt.getTime() + request.ttlS * 1000),
      connections: new Set(),
      server: null,
    };
    if (tunnel.kind === 'tcp') {
      tunnel.server = await this.listen(tunnel);
      const address = tunnel.server.address();
      if (address && typeof address === 'object') tunnel.tcp = { host: this.deps.listen.host, port: address.port };
    }
    this.tunnels.set(tunnel.id, tunnel);
    const timer = setTimeout(() => void this.close(tunnel.id, 'expired'), request.ttlS * 1000);
    timer.unref();
    this.timers.set(tunnel.id, timer);
    return tunnel;
  }

  /** A new connection through a tunnel (an HTTP request to /t/<id>/, a TCP client); refused past the cap. */
  connect(tunnel: Tunnel): TunnelConnection {
    if (!this.tunnels.has(tunnel.id)) throw new LetKiteError('not_found', `no tunnel "${tunnel.id}"`);
    if (tunnel.connections.size >= MAX_CONNECTIONS_PER_TUNNEL) {
      throw new LetKiteError(
        'rate_limited',
        `tunnel "${tunnel.id}" already carries ${MAX_CONNECTIONS_PER_TUNNEL} connections`,
      );
    }
    const connection = new TunnelConnection(this.deps.hub, {
      machineId: tunnel.machineId,
      host: tunnel.host,
      port: tunnel.port,
      context: tunnel.context,
    });
    tunnel.connections.add(connection);
    connection.once('close', () => tunnel.connections.delete(connection));
    // A refusal by the agent (ceiling, policy, resolution) or the machine leaving ends the connection, not the process.
    connection.on('error', () => undefined);
    return connection;
  }

  /** Closes a tunnel: its listener stops, its connections are cut, and the close is audited. False if unknown. */
  async close(id: string, reason: TunnelCloseReason): Promise<boolean> {
    const tunnel = this.tunnels.get(id);
    if (!tunnel) return false;
    this.tunnels.delete(id);
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    tunnel.server?.close();
    for (const c of tunnel.connections) c.destroy();
    tunnel.connections.clear();
    try {
      await this.deps.appendAudit({
        accountId: tunnel.owner.accountId,
        at: this.deps.now().toISOString(),
        actor: tunnel.owner.actor,
        action: 'tunnel.close',
        target: tunnel.machineId,
        outcome: 'ok',
        details: { tunnel_id: id, target: tunnel.target, kind: tunnel.kind, reason },
        machineId: tunnel.machineId,
        credentialId: tunnel.owner.credentialId,
      });
    } catch (err) {
      this.deps.log(`tunnel ${id}: the close could not be audited: ${String(err)}`);
    }
    return true;
  }

  /** Gateway shutdown: every tunnel closes. */
  async closeAll(): Promise<void> {
    clearInterval(this.watcher);
    await Promise.all([...this.tunnels.keys()].map((id) => this.close(id, 'gateway_shutdown')));
  }

  private listen(tunnel: Tunnel): Promise<Server> {
    const { host, ports } = this.deps.listen;
    const server = createServer({ pauseOnConnect: true }, (socket) => this.forward(tunnel, socket));
    const candidates = ports ? shuffledRange(ports.low, ports.high) : [0];
    return new Promise((resolve, reject) => {
      const next = () => {
        const port = candidates.shift();
        if (port === undefined) {
          reject(new LetKiteError('rate_limited', "no free port is left in the gateway's tunnel port range"));
          return;
        }
        server.once('error', (err: NodeJS.ErrnoException) => {
          if (err.code === 'EADDRINUSE' || err.code === 'EACCES') next();
          else reject(new LetKiteError('internal', `cannot listen for a tunnel: ${err.code ?? 'error'}`));
        });
        server.listen(port, host, () => {
          server.removeAllListeners('error');
          server.on('error', (err) => this.deps.log(`tunnel ${tunnel.id}: listener error: ${String(err)}`));
          resolve(server);
        });
      };
      next();
    });
  }

  private forward(tunnel: Tunnel, socket: Socket): void {
    let connection: TunnelConnection;
    try {
      connection = this.connect(tunnel);
    } catch {
      socket.destroy();
      return;
    }
    socket.on('error', () => connection.destroy());
    connection.connected.then(
      () => {
        socket.resume();
        socket.pipe(connection);
        connection.pipe(socket);
        // A clean end reaches the client through the pipe once its buffer is written; a cut does at once.
        connection.once('close', () => {
          if (!connection.readableEnded) socket.destroy();
        });
        socket.once('close', () => connection.destroy());
      },
      () => socket.destroy(),
    );
  }

  /** Closes tunnels whose credential stopped working or whose machine went offline. */
  private async watch(): Promise<void> {
    if (this.watching || this.tunnels.size === 0) return;
    this.watching = true;
    try {
      const tunnels = [...this.tunnels.values()];
      const online = await this.deps.hub.online([...new Set(tunnels.map((t) => t.machineId))]);
      const live = new Map<string, Promise<boolean>>();
      for (const t of tunnels) {
        if (!online.has(t.machineId)) {
          await this.close(t.id, 'machine_offline');
          continue;
        }
        let check = live.get(t.owner.credentialId);
        if (!check) {
          // Fail closed: a credential whose state cannot be read does not keep a tunnel open.
          check = this.deps.credentialLive(t.owner).catch(() => false);
          live.set(t.owner.credentialId, check);
        }
        if (!(await check)) await this.close(t.id, 'revoked');
      }
    } catch (err) {
      this.deps.log(`checking tunnels failed: ${String(err)}`);
    } finally {
      this.watching = false;
    }
  }
}

/** The ports of a range in random order, so tunnels' ports are not predictable from one another. */
function shuffledRange(low: number, high: number): number[] {
  const ports = Array.from({ length: high - low + 1 }, (_, i) => low + i);
  for (let i = ports.length - 1; i > 0; i -= 1) {
    const j = randomBytes(4).readUInt32BE(0) % (i + 1);
    [ports[i], ports[j]] = [ports[j] as number, ports[i] as number];
  }
  return ports;
}
