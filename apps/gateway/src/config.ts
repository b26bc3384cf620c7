import { resolve } from 'node:path';
import { z } from 'zod';
import { type DeploymentMode, deploymentMode, GATEWAY_ID, newGatewayId } from './cluster/cluster-config';
import { TrustedProxies } from './http/client-address';
import { parseSecretKey } from './identity/totp-seed-cipher';

/** Gateway configuration, read once from the environment by the composition root. */
export const GatewayConfig = z.object({
  port: z.coerce.number().int().min(0).max(65535).default(8787),
  host: z.string().min(1).default('127.0.0.1'),
  dataDir: z.string().min(1).default('./.letkite'),
  publicUrl: z.url().optional(),
  databaseUrl: z.string().optional(),
  heartbeatMs: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /**
   * Agent handshakes run at once; past this a connecting agent is answered 503 with a jittered Retry-After
   * (hub/handshake-admission.ts), so a fleet reconnecting after a restart comes back at a bounded rate.
   */
  agentHandshakes: z.coerce.number().int().min(1).max(100_000).default(128),
  /** SMTP server for e-mail, e.g. `smtp://user:pass@mail.example.com:587`; without it links are shown instead. */
  smtpUrl: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  mailFrom: z.string().min(3).optional(),
  /** Accept http://localhost web-push endpoints (a local push service in tests); never in production. */
  pushInsecureLoopback: z
    .enum(['0', '1'])
    .optional()
    .transform((v) => v === '1'),
  /**
   * Development and tests only: fetch OAuth client-ID metadata documents from loopback addresses (over http too).
   * Off in production, where a client_id URL must be https on a public address.
   */
  oauthLoopbackClientDocuments: z
    .enum(['0', '1'])
    .optional()
    .transform((v) => v === '1'),
  /**
   * The key that seals TOTP seeds at rest (32 bytes, hex or base64). Without it the gateway keeps one in
   * `<data>/secret.key` (0600), apart from the database. Never logged; a bad value is reported without it.
   */
  secretKey: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      const key = parseSecretKey(v);
      if (!key) ctx.addIssue({ code: 'custom', message: 'must be 32 bytes as 64 hex digits or base64' });
      return key ?? undefined;
    }),
  /** Browser origins (comma-separated) besides the gateway's own that may call /mcp, e.g. a web-based MCP client. */
  mcpAllowedOrigins: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o.length > 0),
    )
    .pipe(z.array(z.url().transform((u) => new URL(u).origin))),
  /** pino level; `silent` logs nothing. */
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` (one object per line) or `pretty`; unset: pretty when stderr is a terminal, else json. */
  logFormat: z.enum(['json', 'pretty']).optional(),
  /** Serve GET /metrics (Prometheus) on this port, on its own listener; unset: no metrics endpoint at all. */
  metricsPort: z.coerce.number().int().min(0).max(65535).optional(),
  /** The metrics listener's address: loopback unless a scraper elsewhere needs it (e.g. 0.0.0.0 in a pod). */
  metricsHost: z.string().min(1).default('127.0.0.1'),
  /** Ports tcp tunnels listen on ("20000-20100"); unset: any free port the system hands out. */
  tunnelPorts: z
    .string()
    .regex(/^[1-9]\d{0,4}(-[1-9]\d{0,4})?$/, 'a port or a range "LOW-HIGH"')
    .transform((text) => {
      const [low = 0, high = low] = text.split('-').map(Number);
      return { low, high };
    })
    .refine((r) => r.low <= r.high && r.high <= 65535, 'LOW-HIGH with LOW <= HIGH <= 65535')
    .optional(),
  /** Address tcp tunnels listen on (loopback by default: exposing them further is a deliberate choice). */
  tunnelHost: z.string().min(1).default('127.0.0.1'),
  /** On SIGTERM, how long running requests may take to finish before their connections are cut. */
  shutdownTimeoutMs: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /**
   * NATS for the state gateways share (events, rate limits, leases: docs/design/coordination.md), e.g.
   * `nats://127.0.0.1:4222` (JetStream on); unset: in-process, for one gateway.
   */
  natsUrl: z
    .string()
    .regex(/^(nats|tls|ws|wss):\/\/[^\s]+$/, 'must be a nats:// (or tls://, ws://, wss://) URL')
    .optional(),
  /** Subject and bucket prefix, so several clusters (or test runs) can share one NATS server. */
  natsPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'letters, digits, _ and - only (at most 32)')
    .default('lk'),
  /**
   * This gateway's id in a cluster (NATS subjects, presence, logs, /readyz); unset: a fresh one per process, so a
   * restarted gateway never answers for calls routed to the process it replaced.
   */
  gatewayId: z.string().regex(GATEWAY_ID, 'letters, digits, _ and - only (at most 64)').optional(),
  /** Unauthenticated dynamic client registrations allowed per client address an hour (429 past it). */
  oauthRegistrationsPerHour: z.coerce.number().int().min(1).max(100_000).default(20),
  /** An MCP session unused this long answers 404 and the client initializes again (default 24 h, at most 30 days). */
  mcpSessionIdleMs: z.coerce
    .number()
    .int()
    .min(1000)
    .max(30 * 24 * 3_600_000)
    .default(24 * 3_600_000),
  /**
   * Proxies (addresses and CIDR ranges, comma-separated) whose X-Forwarded-For / -Proto and Forwarded headers
   * count; unset: none, every such header is ignored (anyone can send one).
   */
  trustedProxies: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const r = TrustedProxies.parse(v);
      if (r.ok) return r.proxies;
      for (const message of r.problems) ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }),
});
export type GatewayConfig = z.infer<typeof GatewayConfig> & { gatewayId: string; mode: DeploymentMode };

/** Reads LETKITE_* variables; reports every problem at once. */
export function loadConfig(env: Record<string, string | undefined>): GatewayConfig {
  const parsed = GatewayConfig.safeParse({
    port: env.LETKITE_PORT,
    host: env.LETKITE_HOST,
    dataDir: env.LETKITE_DATA,
    publicUrl: env.LETKITE_PUBLIC_URL,
    databaseUrl: env.LETKITE_DATABASE_URL,
    heartbeatMs: env.LETKITE_HEARTBEAT_MS,
    agentHandshakes: env.LETKITE_AGENT_HANDSHAKES || undefined,
    smtpUrl: env.LETKITE_SMTP_URL,
    mailFrom: env.LETKITE_MAIL_FROM,
    pushInsecureLoopback: env.LETKITE_PUSH_INSECURE_LOOPBACK,
    oauthLoopbackClientDocuments: env.LETKITE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS,
    mcpAllowedOrigins: env.LETKITE_MCP_ALLOWED_ORIGINS,
    secretKey: env.LETKITE_SECRET_KEY,
    logLevel: env.LETKITE_LOG_LEVEL || undefined,
    logFormat: env.LETKITE_LOG_FORMAT || undefined,
    metricsPort: env.LETKITE_METRICS_PORT || undefined,
    metricsHost: env.LETKITE_METRICS_HOST || undefined,
    tunnelPorts: env.LETKITE_TUNNEL_PORTS || undefined,
    tunnelHost: env.LETKITE_TUNNEL_HOST || undefined,
    shutdownTimeoutMs: env.LETKITE_SHUTDOWN_TIMEOUT_MS || undefined,
    mcpSessionIdleMs: env.LETKITE_MCP_SESSION_IDLE_MS || undefined,
    oauthRegistrationsPerHour: env.LETKITE_OAUTH_REGISTRATIONS_PER_HOUR || undefined,
    natsUrl: env.LETKITE_NATS_URL || undefined,
    natsPrefix: env.LETKITE_NATS_PREFIX || undefined,
    gatewayId: env.LETKITE_GATEWAY_ID || undefined,
    trustedProxies: env.LETKITE_TRUSTED_PROXIES,
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  LETKITE_${envName(String(i.path[0]))}: ${i.message}`);
    throw new Error(`invalid configuration:\n${problems.join('\n')}`);
  }
  // Cluster mode needs both LETKITE_DATABASE_URL (postgres://) and LETKITE_NATS_URL; either alone is refused here.
  const mode = deploymentMode(parsed.data);
  return {
    ...parsed.data,
    dataDir: resolve(parsed.data.dataDir),
    gatewayId: parsed.data.gatewayId ?? newGatewayId(),
    mode,
  };
}

function envName(key: string): string {
  const names: Record<string, string> = {
    port: 'PORT',
    host: 'HOST',
    dataDir: 'DATA',
    publicUrl: 'PUBLIC_URL',
    databaseUrl: 'DATABASE_URL',
    heartbeatMs: 'HEARTBEAT_MS',
    agentHandshakes: 'AGENT_HANDSHAKES',
    smtpUrl: 'SMTP_URL',
    mailFrom: 'MAIL_FROM',
    pushInsecureLoopback: 'PUSH_INSECURE_LOOPBACK',
    oauthLoopbackClientDocuments: 'OAUTH_LOOPBACK_CLIENT_DOCUMENTS',
    mcpAllowedOrigins: 'MCP_ALLOWED_ORIGINS',
    secretKey: 'SECRET_KEY',
    logLevel: 'LOG_LEVEL',
    logFormat: 'LOG_FORMAT',
    metricsPort: 'METRICS_PORT',
    metricsHost: 'METRICS_HOST',
    tunnelPorts: 'TUNNEL_PORTS',
    tunnelHost: 'TUNNEL_HOST',
    shutdownTimeoutMs: 'SHUTDOWN_TIMEOUT_MS',
    mcpSessionIdleMs: 'MCP_SESSION_IDLE_MS',
    oauthRegistrationsPerHour: 'OAUTH_REGISTRATIONS_PER_HOUR',
    natsUrl: 'NATS_URL',
    natsPrefix: 'NATS_PREFIX',
    gatewayId: 'GATEWAY_ID',
    trustedProxies: 'TRUSTED_PROXIES',
  };
  return names[key] ?? key.toUpperCase();
}
