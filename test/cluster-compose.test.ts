import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../apps/gateway/src/config';
import { repoRoot } from './support/processes';

/**
 * infra/compose/compose.cluster.yaml, parsed (no Docker runs here): two gateways in cluster mode on PostgreSQL and
 * NATS with JetStream and a max_payload, Caddy balancing over both with /readyz health checks.
 */
const dir = join(repoRoot, 'infra/compose');
const read = (name: string) => readFileSync(join(dir, name), 'utf8');

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  env_file?: { path: string; required: boolean }[];
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  read_only?: boolean;
  cap_drop?: string[];
}

const compose = parse(read('compose.cluster.yaml'), { merge: true }) as { services: Record<string, Service> };
const { services } = compose;

/** What ${VAR:?…} interpolation gives with example values. */
function interpolate(value: string): string {
  const example: Record<string, string> = {
    LETKITE_DOMAIN: 'letkite.example.com',
    LETKITE_PG_PASSWORD: 'example-password',
  };
  return value.replace(/\$\{([A-Z_]+)(:\?[^}]*)?\}/g, (_, name: string) => example[name] ?? '');
}

describe('the cluster compose file', () => {
  test('two gateways, PostgreSQL, NATS and Caddy', () => {
    expect(Object.keys(services).sort()).toEqual(['caddy', 'gateway-a', 'gateway-b', 'nats', 'postgres']);
    expect(services.postgres?.image).toMatch(/^postgres:\d+/);
    expect(services.nats?.image).toMatch(/^nats:2/);
    expect(services.caddy?.ports).toEqual(['80:80', '443:443']);
    // Only the proxy is published.
    for (const name of ['gateway-a', 'gateway-b', 'postgres', 'nats']) expect(services[name]?.ports).toBeUndefined();
  });

  test("each gateway's environment is a valid cluster configuration, with its own id and one shared data volume", () => {
    const ids = new Set<string>();
    for (const name of ['gateway-a', 'gateway-b']) {
      const gw = services[name] as Service;
      const env = Object.fromEntries(Object.entries(gw.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));
      const config = loadConfig(env);
      expect(config.mode).toBe('cluster');
      expect(config.databaseUrl).toMatch(/^postgres:\/\/letkite:example-password@postgres:5432\/letkite$/);
      expect(config.natsUrl).toBe('nats://nats:4222');
      expect(config.publicUrl).toBe('https://letkite.example.com');
      ids.add(config.gatewayId);
      expect(gw.volumes).toEqual(['letkite-shared:/var/lib/letkite-gateway']);
      // The secret key comes from the env file, which must exist; hardening as in the embedded compose file.
      expect(gw.env_file).toEqual([{ path: './gateway.env', required: true }]);
      expect(gw.read_only).toBe(true);
      expect(gw.cap_drop).toEqual(['ALL']);
      expect(gw.depends_on).toMatchObject({
        postgres: { condition: 'service_healthy' },
        nats: { condition: 'service_healthy' },
      });
    }
    expect([...ids].sort()).toEqual(['gw-a', 'gw-b']);
  });

  test('NATS runs JetStream with max_payload set', () => {
    expect(services.nats?.command).toEqual(['-c', '/etc/nats/nats.conf']);
    expect(services.nats?.volumes).toContain('./nats.conf:/etc/nats/nats.conf:ro');
    const conf = read('nats.conf');
    expect(conf).toMatch(/^max_payload: 8MB$/m);
    expect(conf).toMatch(/^jetstream \{[^}]*store_dir: \/data/m);
    expect(services.nats?.healthcheck?.test.join(' ')).toContain('js-enabled-only=true');
  });

  test('Caddy balances over both gateways, health-checked on /readyz, streaming unbuffered', () => {
    expect(services.caddy?.volumes).toContain('./Caddyfile.cluster:/etc/caddy/Caddyfile:ro');
    const caddyfile = read('Caddyfile.cluster');
    expect(caddyfile).toMatch(/reverse_proxy gateway-a:8787 gateway-b:8787 \{/);
    expect(caddyfile).toMatch(/health_uri \/readyz/);
    expect(caddyfile).toMatch(/flush_interval -1/);
    expect(caddyfile).toMatch(/reuse_private_keys/);
  });
});
