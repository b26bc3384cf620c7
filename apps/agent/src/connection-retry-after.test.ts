import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { GatewayConnection, retryAfterMs } from './connection';
import type { AgentState } from './state';

/**
 * A gateway at its handshake bound answers the upgrade 503 with Retry-After (gateway hub/handshake-admission.ts):
 * the real GatewayConnection must stay away at least that long, whatever its own backoff says.
 */
const servers: { close(): void }[] = [];
const conns: GatewayConnection[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) await c.stop();
  for (const s of servers.splice(0)) s.close();
});

test('Retry-After takes delta-seconds only, capped', () => {
  expect(retryAfterMs('3')).toBe(3000);
  expect(retryAfterMs(' 2 ')).toBe(2000);
  expect(retryAfterMs(undefined)).toBe(0);
  expect(retryAfterMs('Wed, 21 Oct 2026 07:28:00 GMT')).toBe(0);
  expect(retryAfterMs('-1')).toBe(0);
  expect(retryAfterMs('99999')).toBe(300_000);
});

test('an agent refused with 503 Retry-After dials again no sooner than it was told', async () => {
  const upgrades: number[] = [];
  const server = createServer();
  server.on('upgrade', (_req, socket) => {
    upgrades.push(performance.now());
    socket.end('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const state: AgentState = {
    gateway_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    machine_id: 'mch_retry',
    name: 'retry',
    private_key_pem: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    insecure: false,
    gateway_public_key: 'AAAA',
  };
  const logs: string[] = [];
  // Its own backoff alone would retry within 20 ms.
  const conn = new GatewayConnection(
    state,
    { log: (m) => logs.push(m), onConnected: () => {}, onRequest: async () => {} },
    { initialMs: 10, maxMs: 20 },
  );
  conns.push(conn);
  conn.start();
  const deadline = Date.now() + 10_000;
  while (upgrades.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(upgrades.length).toBeGreaterThanOrEqual(2);
  const gap = (upgrades[1] as number) - (upgrades[0] as number);
  expect(gap).toBeGreaterThanOrEqual(2000);
  expect(gap).toBeLessThan(2000 * 1.5 + 500);
  expect(logs.some((l) => l.includes('answered 503 (retry after 2 s)'))).toBe(true);
});
