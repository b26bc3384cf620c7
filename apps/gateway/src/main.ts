import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import { loadCommandRules } from '@letkite/command-rules';
import { AGENT_WS_PATH, MAX_FRAME_BYTES } from '@letkite/protocol';
import { WebSocketServer } from 'ws';
import { createApp } from './app';
import { startExpirySweeper } from './approvals/expiry';
import { openApprovals } from './approvals/open-approvals';
import { PRUNE_INTERVAL_MS, pruneByRetention } from './audit/prune-audit';
import type { GatewayConfig } from './config';
import type { Coordination } from './coordination/coordination';
import { startLeasedInterval } from './coordination/leased-interval';
import { LocalCoordination } from './coordination/local-coordination';
import type { GatewayDeps } from './deps';
import { healthRoutes, pgMigrationsCheck, type ReadinessCheck, sqliteMigrationsCheck } from './http/health';
import { createGatewayLogger, type Logger } from './http/logger';
import { GatewayMetrics, metricsRoutes } from './http/metrics';
import { recordPublicUrl } from './http/recorded-public-url';
import { createAgentEndpoint } from './hub/agent-endpoint';
import { type GatewayIdentity, gatewayIdentityFile, loadGatewayIdentity } from './hub/gateway-identity';
import { HandshakeAdmission } from './hub/handshake-admission';
import { LocalHub } from './hub/local-hub';
import type { IdentityStore } from './identity/identity-store';
import { openIdentityStore } from './identity/open-identity-store';
import { loadOrCreateSecretKeyFile } from './identity/totp-seed-cipher';
import { McpEndpoint } from './mcp/mcp-endpoint';
import { toolHandlers } from './mcp/tools';
import { createMailer } from './notify/mailer';
import { ClientDocumentFetcher } from './oauth/client-metadata-document';
import { openOAuthStore } from './oauth/open-oauth-store';
import { pruneUnusedClients } from './oauth/register-client';
import { mcpResource } from './oauth/tokens';
import { openPolicyStore } from './store/open-policy-store';
import { openStore } from './store/open-store';
import { PgStore } from './store/postgres/pg-store';
import { SqliteStore } from './store/sqlite/sqlite-store';
import type { Account, Store, User } from './store/types';
import { openTransferStore } from './transfers/open-transfer-store';
import { credentialLiveCheck } from './tunnels/credential-live';
import { TunnelRegistry } from './tunnels/tunnel-registry';
import { handleTunnelSocket, tunnelSocketId } from './tunnels/tunnel-socket';
import { GATEWAY_VERSION } from './version';
import { openMachineNetworkStore } from './wake/open-machine-network-store';

export interface RunningGateway {
  url: string;
  port: number;
  store: Store;
  identity: IdentityStore;
  account: Account;
  owner: User;
  /** The identity key agents pin at enrollment (docs/design/agent-trust.md). */
  gatewayIdentity: GatewayIdentity;
  /** The structured logger (pino). */
  logger: Logger;
  /** Where GET /metrics is served (its own listener), when LETKITE_METRICS_PORT is set. */
  metricsUrl?: string;
  /**
   * Graceful shutdown: stop accepting connections, let running requests finish (up to the configured timeout),
   * then close the MCP sessions, the agent sockets (1001 going away: they reconnect, to another gateway in a
   * cluster) and the store. Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/**
 * The composition root: opens the store, builds the hub and the MCP endpoint, serves HTTP and the agent
 * WebSocket. Resolves once it is listening.
 */
export async function startGateway(
  config: GatewayConfig,
  options: { log?: (msg: string) => void; logger?: Logger } = {},
): Promise<RunningGateway> {
  // With `log` (the embedded `letkite start`) lines go there in the readable format; else JSON (or pretty on a
  // terminal) to stderr.
  const logger =
    options.logger ?? createGatewayLogger({ level: config.logLevel, format: config.logFormat, write: options.log });
  const log = (msg: string) => logger.info(msg);
  await loadCommandRules();
  const store = await openStore(config.databaseUrl ?? join(config.dataDir, 'letkite.db'));
  const now = () => new Date();
  const { account, owner } = await store.bootstrap(now().toISOString());
  const gatewayIdentity = loadGatewayIdentity(gatewayIdentityFile(config.dataDir));
  log(`gateway identity ${gatewayIdentity.fingerprint}`);
  // The TOTP seed key lives apart from the database: LETKITE_SECRET_KEY, else a 0600 file next to it.
  const secretKey = config.secretKey ?? loadOrCreateSecretKeyFile(join(config.dataDir, 'secret.key'));
  const identity = openIdentityStore(store, { secretKey });
  const policies = openPolicyStore(store);
  const transfers = openTransferStore(store);
  const machineNetworks = openMachineNetworkStore(store);
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom });
  log(`gateway ${config.gatewayId} (${config.mode} mode)`);
  // Cluster mode: calls for machines another gateway holds go there over NATS (docs/design/cluster.md).
  // NATS (and the cluster code) load only when configured: a gateway on its own never pays for them (bench/memory).
  const cluster =
    config.mode === 'cluster' && config.natsUrl
      ? await (await import('./cluster/cluster-link')).ClusterLink.connect({
          url: config.natsUrl,
          prefix: config.natsPrefix,
          gatewayId: config.gatewayId,
          log,
        })
      : null;
  const hub = cluster?.hub ?? new LocalHub();
  const coordination: Coordination = config.natsUrl
    ? await (await import('./coordination/nats-coordination')).NatsCoordination.connect({
        url: config.natsUrl,
        prefix: config.natsPrefix,
        log,
      })
    : new LocalCoordination();
  if (config.natsUrl) log(`coordination over NATS (prefix ${config.natsPrefix})`);
  const metrics = new GatewayMetrics({ agentsOnline: () => hub.onlineCount });
  let draining = false;

  // The app needs the port (for its public URL), so it is built after listen; until then requests get 503.
  let app: ReturnType<typeof createApp> | null = null;
  const server = createAdaptorServer({
    // The node bindings (env) go along: the client address is read from the socket (http/client-address.ts).
    fetch: (req: Request, env: unknown) => (app ? app.fetch(req, env) : new Response('starting', { status: 503 })),
    hostname: config.host,
  });
  // Requests still being answered (response not closed yet), for the drain at shutdown. The standalone MCP
  // notification stream (GET /mcp) never ends by itself, so it is not waited for.
  const inflight = new Set<ServerResponse>();
  server.on('request', (req, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close');
    if (req.method === 'GET' && new URL(req.url ?? '/', 'http://x').pathname === '/mcp') return;
    inflight.add(res);
    res.on('close', () => inflight.delete(res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const publicUrl = config.publicUrl ?? `http://localhost:${port}`;

  if (!mailer.configured) log('e-mail is off (set LETKITE_SMTP_URL and LETKITE_MAIL_FROM to send approval requests)');
  const approvals = openApprovals({
    store,
    coordination,
    mailer,
    mailFrom: config.mailFrom,
    publicUrl,
    now,
    log,
    allowInsecurePushLoopback: config.pushInsecureLoopback,
  });
  metrics.setSources({
    approvalsPending: async () => (await approvals.store.list(account.id, { status: 'pending', limit: 10_000 })).length,
  });
  // Expired requests are marked (and their waiters woken) even when nobody looks at them, by one gateway of the
  // cluster at a time; `approvals.store`'s expireDue tells the requester and wakes waiters itself, once per request.
  const stopExpiry = startExpirySweeper({
    expireDue: (at) => approvals.store.expireDue(at),
    lease: coordination.lease('approvals.expiry', 45_000),
    now,
    log,
  });
  const deps: GatewayDeps = {
    store,
    identity,
    policies,
    transfers,
    mailer,
    hub,
    approvals,
    coordination,
    now,
    log,
    publicUrl,
    version: GATEWAY_VERSION,
    gatewayIdentity,
    metrics,
    machineNetworks,
  };
  const mcp = new McpEndpoint(deps, toolHandlers, { idleMs: config.mcpSessionIdleMs });
  // Sessions closed or idle for a week are forgotten, by one gateway of the cluster.
  const stopSessionPrune = startLeasedInterval({
    lease: coordination.lease('mcp.session-prune', 3 * 3_600_000),
    everyMs: 3_600_000,
    work: () => mcp.pruneSessions(),
    log,
    what: 'pruning MCP sessions',
  });
  const oauth = {
    store: openOAuthStore(store),
    clientDocuments: new ClientDocumentFetcher({ allowLoopback: config.oauthLoopbackClientDocuments }),
    registrationsPerHour: config.oauthRegistrationsPerHour,
  };
  // Tunnels live in this process (their listeners too) and close with it.
  const tunnels = new TunnelRegistry({
    hub,
    listen: { host: config.tunnelHost, ports: config.tunnelPorts ?? null },
    publicUrl,
    credentialLive: credentialLiveCheck({ identity, oauth: oauth.store, now }),
    appendAudit: (event) => store.appendAudit(event),
    now,
    log,
  });
  deps.tunnels = tunnels;
  // Registrations nobody used within a day are deleted, by one gateway of the cluster.
  const stopClientPrune = startLeasedInterval({
    lease: coordination.lease('oauth.client-prune', 30 * 60_000),
    everyMs: 10 * 60_000,
    work: () => pruneUnusedClients({ oauth, now }),
    log,
    what: 'pruning unused OAuth clients',
  });
  // The activity log's retention, applied by one gateway of the cluster (the chain keeps verifying: see prune-audit).
  const stopAuditPrune = startLeasedInterval({
    lease: coordination.lease('audit.prune', 2 * PRUNE_INTERVAL_MS),
    everyMs: PRUNE_INTERVAL_MS,
    work: () => pruneByRetention(store, account.id, now()),
    log,
    what: 'pruning the activity log',
  });
  if (config.oauthLoopbackClientDocuments)
    log('OAuth client metadata documents may be fetched from loopback (dev only)');
  const readiness: ReadinessCheck[] = [
    // A trivial query through the store: the database answers and its tables are there.
    { name: 'store', check: async () => void (await store.getUser('readyz-probe')) },
  ];
  if (cluster) readiness.push({ name: 'nats', check: () => cluster.ping() });
  if (store instanceof SqliteStore) readiness.push(sqliteMigrationsCheck(store.sqlite));
  if (store instanceof PgStore) readiness.push(pgMigrationsCheck(store.database.pool));
  app = createApp({
    ...deps,
    mcp,
    oauth,
    mcpAllowedOrigins: config.mcpAllowedOrigins,
    logger,
    requestLogLevel: options.log ? 'debug' : 'info',
    readiness,
    draining: () => draining,
    trustedProxies: config.trustedProxies,
    gatewayId: config.gatewayId,
  });

  // /metrics only on its own listener (loopback by default), so the public port behind the proxy never serves it.
  let metricsServer: ReturnType<typeof createAdaptorServer> | null = null;
  let metricsUrl: string | undefined;
  if (config.metricsPort !== undefined) {
    const metricsApp = healthRoutes({ version: GATEWAY_VERSION, checks: readiness, draining: () => draining });
    metricsApp.route('/', metricsRoutes(metrics));
    const ms = createAdaptorServer({ fetch: metricsApp.fetch, hostname: config.metricsHost });
    await new Promise<void>((resolve, reject) => {
      ms.once('error', reject);
      ms.listen(config.metricsPort, config.metricsHost, () => resolve());
    });
    metricsServer = ms;
    const host = config.metricsHost.includes(':') ? `[${config.metricsHost}]` : config.metricsHost;
    metricsUrl = `http://${host}:${(ms.address() as AddressInfo).port}/metrics`;
    log(`metrics on ${metricsUrl}`);
  }

  // Frames over the limit make ws close the socket with 1009; only that agent is affected.
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const admission = new HandshakeAdmission(config.agentHandshakes);
  // One endpoint for every agent socket: per-socket state is only what each connection needs (hub/agent-endpoint.ts).
  const agentEndpoint = createAgentEndpoint({
    store,
    machineNetworks,
    hub,
    now,
    log,
    heartbeatMs: config.heartbeatMs,
    gatewayIdentity,
    gateways: cluster ? () => cluster.gateways() : undefined,
  });
  // `letkite tunnel open`: one TCP connection of a tunnel per WebSocket (tunnels/tunnel-socket.ts).
  const tunnelWss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const tunnelId = tunnelSocketId(path);
    if (tunnelId !== null && !draining) {
      void handleTunnelSocket(req, socket, head, tunnelId, {
        registry: tunnels,
        wss: tunnelWss,
        bearer: () => ({ store, identity, oauth: oauth.store, now: now(), resource: mcpResource(publicUrl) }),
      });
      return;
    }
    if (path !== AGENT_WS_PATH || draining) {
      socket.destroy();
      return;
    }
    const release = admission.tryAdmit();
    if (!release) {
      admission.refuse(socket);
      return;
    }
    socket.once('close', release);
    // Once the handshake settles the socket's close listener has nothing left to release: dropped, not kept per agent.
    const settled = () => {
      socket.off('close', release);
      release();
    };
    wss.handleUpgrade(req, socket, head, (ws) => agentEndpoint(ws, settled));
  });

  // Agents are told about this gateway from now on (their welcome lists the cluster's live gateways).
  await cluster?.announce(publicUrl);
  // For `letkite admin join-token` run later with only the data directory (it cannot read gateway.env).
  recordPublicUrl(config.dataDir, publicUrl);
  log(`listening on ${publicUrl}`);
  let closing: Promise<void> | null = null;
  const shutdown = async () => {
    draining = true;
    // Out of the cluster's list first: agents this shutdown sends away (1001) reconnect to the others.
    await cluster?.leave();
    await stopExpiry();
    await stopSessionPrune();
    await stopClientPrune();
    await stopAuditPrune();
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    if ('closeIdleConnections' in server) server.closeIdleConnections();
    if (inflight.size > 0) log(`shutting down: waiting for ${inflight.size} running request(s)`);
    const deadline = Date.now() + config.shutdownTimeoutMs;
    while (inflight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    if (inflight.size > 0)
      log(`shutting down: ${inflight.size} request(s) still running after ${config.shutdownTimeoutMs} ms are cut`);
    await mcp.close();
    await tunnels.closeAll();
    await hub.close();
    await cluster?.close();
    for (const client of wss.clients) client.terminate();
    for (const client of tunnelWss.clients) client.terminate();
    wss.close();
    if ('closeAllConnections' in server) server.closeAllConnections();
    await stopped;
    if (metricsServer) {
      const m = metricsServer;
      await new Promise<void>((resolve) => {
        m.close(() => resolve());
        if ('closeAllConnections' in m) m.closeAllConnections();
      });
    }
    approvals.events.close();
    await coordination.close();
    await store.close();
    log('stopped');
  };
  return {
    url: publicUrl,
    port,
    store,
    identity,
    account,
    owner,
    gatewayIdentity,
    logger,
    metricsUrl,
    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}
