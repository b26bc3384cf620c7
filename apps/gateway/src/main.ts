import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import { loadCommandRules } from '@letkite/command-rules';
import { AGENT_WS_PATH, MAX_FRAME_BYTES } from '@letkite/protocol';
import { WebSocketServer } from 'ws';
import { createApp } from './app';
import { openApprovals } from './approvals/open-approvals';
import type { GatewayConfig } from './config';
import type { GatewayDeps } from './deps';
import { handleAgentSocket } from './hub/agent-endpoint';
import { type GatewayIdentity, gatewayIdentityFile, loadGatewayIdentity } from './hub/gateway-identity';
import { LocalHub } from './hub/local-hub';
import type { IdentityStore } from './identity/identity-store';
import { openIdentityStore } from './identity/open-identity-store';
import { loadOrCreateSecretKeyFile } from './identity/totp-seed-cipher';
import { McpEndpoint } from './mcp/mcp-endpoint';
import { toolHandlers } from './mcp/tools';
import { createMailer } from './notify/mailer';
import { ClientDocumentFetcher } from './oauth/client-metadata-document';
import { openOAuthStore } from './oauth/open-oauth-store';
import { openStore } from './store/open-store';
import type { Account, Store, User } from './store/types';
import { GATEWAY_VERSION } from './version';

export interface RunningGateway {
  url: string;
  port: number;
  store: Store;
  identity: IdentityStore;
  account: Account;
  owner: User;
  /** The identity key agents pin at enrollment (docs/design/agent-trust.md). */
  gatewayIdentity: GatewayIdentity;
  close(): Promise<void>;
}

/**
 * The composition root: opens the store, builds the hub and the MCP endpoint, serves HTTP and the agent
 * WebSocket. Resolves once it is listening.
 */
export async function startGateway(
  config: GatewayConfig,
  options: { log?: (msg: string) => void } = {},
): Promise<RunningGateway> {
  const log = options.log ?? ((msg: string) => console.error(`[gateway] ${msg}`));
  await loadCommandRules();
  const store = openStore(config.databaseUrl ?? join(config.dataDir, 'letkite.db'));
  const now = () => new Date();
  const { account, owner } = await store.bootstrap(now().toISOString());
  const gatewayIdentity = loadGatewayIdentity(gatewayIdentityFile(config.dataDir));
  log(`gateway identity ${gatewayIdentity.fingerprint}`);
  // The TOTP seed key lives apart from the database: LETKITE_SECRET_KEY, else a 0600 file next to it.
  const secretKey = config.secretKey ?? loadOrCreateSecretKeyFile(join(config.dataDir, 'secret.key'));
  const identity = openIdentityStore(store, { secretKey });
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom });
  const hub = new LocalHub();

  // The app needs the port (for its public URL), so it is built after listen; until then requests get 503.
  let app: ReturnType<typeof createApp> | null = null;
  const server = createAdaptorServer({
    fetch: (req: Request) => (app ? app.fetch(req) : new Response('starting', { status: 503 })),
    hostname: config.host,
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
    mailer,
    mailFrom: config.mailFrom,
    publicUrl,
    now,
    log,
    allowInsecurePushLoopback: config.pushInsecureLoopback,
  });
  // Expired requests are marked (and their waiters woken) even when nobody looks at them.
  const expiry = setInterval(() => {
    approvals.store
      .expireDue(now().toISOString())
      .then((expired) => {
        for (const r of expired) {
          approvals.events.changed(r.id);
          approvals.notifier.settled(r).catch((err) => log(`telling the requester of ${r.id} failed: ${String(err)}`));
        }
      })
      .catch((err) => log(`expiring approvals failed: ${String(err)}`));
  }, 15_000);
  expiry.unref();
  const deps: GatewayDeps = {
    store,
    identity,
    mailer,
    hub,
    approvals,
    now,
    log,
    publicUrl,
    version: GATEWAY_VERSION,
    gatewayIdentity,
  };
  const mcp = new McpEndpoint(deps, toolHandlers);
  const oauth = {
    store: openOAuthStore(store),
    clientDocuments: new ClientDocumentFetcher({ allowLoopback: config.oauthLoopbackClientDocuments }),
  };
  if (config.oauthLoopbackClientDocuments)
    log('OAuth client metadata documents may be fetched from loopback (dev only)');
  app = createApp({ ...deps, mcp, oauth, mcpAllowedOrigins: config.mcpAllowedOrigins });

  // Frames over the limit make ws close the socket with 1009; only that agent is affected.
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== AGENT_WS_PATH) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) =>
      handleAgentSocket(ws, { store, hub, now, log, heartbeatMs: config.heartbeatMs, gatewayIdentity }),
    );
  });

  log(`listening on ${publicUrl}`);
  return {
    url: publicUrl,
    port,
    store,
    identity,
    account,
    owner,
    gatewayIdentity,
    async close() {
      clearInterval(expiry);
      await mcp.close();
      await hub.close();
      for (const client of wss.clients) client.terminate();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await store.close();
    },
  };
}
