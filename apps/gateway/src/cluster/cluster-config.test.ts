import { describe, expect, test } from 'vitest';
import { loadConfig } from '../config';
import { deploymentMode, GATEWAY_ID, newGatewayId } from './cluster-config';

describe('deployment mode', () => {
  test('neither variable, or a SQLite path: embedded', () => {
    expect(deploymentMode({})).toBe('embedded');
    expect(deploymentMode({ databaseUrl: '/var/lib/letkite/letkite.db' })).toBe('embedded');
  });

  test('a postgres:// URL and a NATS URL together: cluster', () => {
    expect(deploymentMode({ databaseUrl: 'postgres://u@db/letkite', natsUrl: 'nats://n:4222' })).toBe('cluster');
    expect(deploymentMode({ databaseUrl: 'postgresql://u@db/letkite', natsUrl: 'nats://n:4222' })).toBe('cluster');
  });

  test('PostgreSQL without NATS is refused, naming LETKITE_NATS_URL, never quoting the URL', () => {
    const run = () => deploymentMode({ databaseUrl: 'postgres://u:s3cret@db/letkite' });
    expect(run).toThrow(expect.objectContaining({ code: 'invalid_config', details: { missing: 'LETKITE_NATS_URL' } }));
    expect(run).toThrow(/LETKITE_NATS_URL/);
    expect(run).not.toThrow(/s3cret/);
  });

  test('NATS without PostgreSQL is refused, naming LETKITE_DATABASE_URL', () => {
    const run = () => deploymentMode({ natsUrl: 'nats://127.0.0.1:4222' });
    expect(run).toThrow(
      expect.objectContaining({ code: 'invalid_config', details: { missing: 'LETKITE_DATABASE_URL' } }),
    );
    expect(() => deploymentMode({ databaseUrl: '/x/letkite.db', natsUrl: 'nats://n:4222' })).toThrow(
      /LETKITE_DATABASE_URL/,
    );
  });

  test('loadConfig applies the rule and carries the mode', () => {
    expect(() => loadConfig({ LETKITE_DATABASE_URL: 'postgres://db/x' })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    );
    expect(() => loadConfig({ LETKITE_NATS_URL: 'nats://n:4222' })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    );
    expect(loadConfig({}).mode).toBe('embedded');
    expect(loadConfig({ LETKITE_DATABASE_URL: 'postgres://db/x', LETKITE_NATS_URL: 'nats://n:4222' }).mode).toBe(
      'cluster',
    );
  });
});

describe('gateway id', () => {
  test('LETKITE_GATEWAY_ID is taken as given; without it every process gets a fresh one', () => {
    expect(loadConfig({ LETKITE_GATEWAY_ID: 'gw-a' }).gatewayId).toBe('gw-a');
    const a = loadConfig({}).gatewayId;
    const b = loadConfig({}).gatewayId;
    expect(a).toMatch(GATEWAY_ID);
    expect(a).not.toBe(b);
    expect(newGatewayId()).toMatch(/^gw-[0-9a-f]{12}$/);
  });

  test('an id that is not one NATS subject token is refused', () => {
    for (const bad of ['a.b', 'a*', 'a b', '>', 'x'.repeat(65)]) {
      expect(() => loadConfig({ LETKITE_GATEWAY_ID: bad })).toThrow(/LETKITE_GATEWAY_ID/);
    }
  });
});
