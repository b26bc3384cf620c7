import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { GatewayRegistry } from './gateway-registry';

/** Against the real NATS (JetStream) on 127.0.0.1:4222, under a prefix of this run's own. */
const prefix = `lkreg-${randomUUID().slice(0, 8)}`;
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connect({ servers: process.env.LETKITE_TEST_NATS_URL ?? '127.0.0.1:4222' });
});

afterAll(async () => {
  await (await nc.jetstreamManager()).streams.delete(`KV_${prefix}-gateways`).catch(() => undefined);
  await nc?.close();
});

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('every gateway sees the live ones, itself first, each URL once; a graceful leave is seen at once', async () => {
  const a = await GatewayRegistry.start({ nc, prefix, gatewayId: 'gw-a', url: 'https://a.example.com', ttlMs: 3000 });
  const b = await GatewayRegistry.start({ nc, prefix, gatewayId: 'gw-b', url: 'https://b.example.com', ttlMs: 3000 });
  // Two gateways behind one proxy URL count once.
  const c = await GatewayRegistry.start({ nc, prefix, gatewayId: 'gw-c', url: 'https://b.example.com', ttlMs: 3000 });
  await until(() => a.urls().length === 2);
  expect(a.urls()).toEqual(['https://a.example.com', 'https://b.example.com']);
  expect(b.urls()).toEqual(['https://b.example.com', 'https://a.example.com']);
  // Refreshed before the TTL: still listed after it.
  await new Promise((r) => setTimeout(r, 3500));
  expect(c.urls()).toEqual(['https://b.example.com', 'https://a.example.com']);
  await a.close();
  await until(() => b.urls().length === 1);
  expect(b.urls()).toEqual(['https://b.example.com']);
  await b.close();
  await c.close();
});

test("a gateway that dies without leaving drops out of the others' lists after the TTL", async () => {
  const other = await connect({ servers: process.env.LETKITE_TEST_NATS_URL ?? '127.0.0.1:4222' });
  const dying = await GatewayRegistry.start({
    nc: other,
    prefix: `${prefix}x`,
    gatewayId: 'gw-dying',
    url: 'https://dying.example.com',
    ttlMs: 1500,
  });
  const live = await GatewayRegistry.start({
    nc,
    prefix: `${prefix}x`,
    gatewayId: 'gw-live',
    url: 'https://live.example.com',
    ttlMs: 1500,
  });
  await until(() => live.urls().length === 2);
  // kill -9: the connection goes, nothing is deleted.
  await other.close();
  void dying;
  await until(() => live.urls().length === 1, 6000);
  expect(live.urls()).toEqual(['https://live.example.com']);
  await live.close();
  await (await nc.jetstreamManager()).streams.delete(`KV_${prefix}x-gateways`).catch(() => undefined);
}, 15_000);
