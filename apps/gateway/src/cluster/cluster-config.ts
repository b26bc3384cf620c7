import { randomBytes } from 'node:crypto';
import { LetKiteError } from '@letkite/protocol';

/**
 * Embedded mode: one gateway, SQLite, everything shared in-process. Cluster mode: several gateways on one
 * PostgreSQL database that route calls and share coordination over NATS (docs/design/cluster.md).
 */
export type DeploymentMode = 'embedded' | 'cluster';

const POSTGRES_URL = /^postgres(ql)?:\/\//;

/**
 * The mode the two variables select. They go together: PostgreSQL without NATS would run gateways that cannot
 * reach each other's agents nor share rate limits and leases; NATS without PostgreSQL would share a hub but not
 * the data. Either alone is refused with `invalid_config` naming the one that is missing. Values are never
 * quoted back (a database URL may carry a password).
 */
export function deploymentMode(env: {
  databaseUrl?: string | undefined;
  natsUrl?: string | undefined;
}): DeploymentMode {
  const postgres = env.databaseUrl !== undefined && POSTGRES_URL.test(env.databaseUrl);
  const nats = env.natsUrl !== undefined && env.natsUrl !== '';
  if (postgres && !nats) {
    throw new LetKiteError(
      'invalid_config',
      'LETKITE_DATABASE_URL is a PostgreSQL URL but LETKITE_NATS_URL is not set: cluster mode needs both (set LETKITE_NATS_URL=nats://…, or unset LETKITE_DATABASE_URL for embedded mode)',
      { missing: 'LETKITE_NATS_URL' },
    );
  }
  if (nats && !postgres) {
    throw new LetKiteError(
      'invalid_config',
      'LETKITE_NATS_URL is set but LETKITE_DATABASE_URL is not a postgres:// URL: cluster mode needs both (set LETKITE_DATABASE_URL=postgres://…, or unset LETKITE_NATS_URL for embedded mode)',
      { missing: 'LETKITE_DATABASE_URL' },
    );
  }
  return postgres ? 'cluster' : 'embedded';
}

/** What a gateway id may be: one NATS subject token (no dots, wildcards or spaces), short enough for logs. */
export const GATEWAY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A fresh gateway id for a process started without LETKITE_GATEWAY_ID: unique per process, not per host. */
export function newGatewayId(): string {
  return `gw-${randomBytes(6).toString('hex')}`;
}
