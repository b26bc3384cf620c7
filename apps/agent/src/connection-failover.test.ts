import { createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { gatewayProofText, PROTOCOL_VERSION } from '@letkite/protocol';
import { afterEach, expect, test } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { GatewayConnection } from './connection';
import type { AgentState } from './state';

/**
 * Cluster failover (docs/design/cluster.md) with a real GatewayConnection and real WebSocket servers playing the
 * gateways: the welcome's list of gateways only adds places to dial. Each must prove the pinned identity; one that
 * cannot (a URL a compromised list could name) is refused and obeyed in nothing.
 */
const machineId = 'mch_fo';
const clusterKey = generateKeyPairSync('ed25519').privateKey;
const rogueKey = generateKeyPairSync('ed25519').privateKey;
const spki = (k: KeyObject) => createPublicKey(k).export({ format: 'der', type: 'spki' }).toString('base64');
const NONCE = 'n'.repeat(43);

interface FakeGateway {
  url: string;
  wss: WebSocketServer;
  /** Close codes of the sockets the agent opened here, in order. */
  closes: number[];
  dials: number;
}

const servers: WebSocketServer[] = [];
const connections: GatewayConnection[] = [];
afterEach(async () => {
  for (const c of connections.splice(0)) await c.stop();
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    s.close();
  }
});

/** A gateway signing with `key`; `afterWelcome` runs on the socket once the welcome is sent. */
async function gateway(
  key: KeyObject,
  options: { gateways?: () => string[]; afterWelcome?: (ws: WebSocket) => void } = {},
): Promise<FakeGateway> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/agent/v1' });
  servers.push(wss);
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const g: FakeGateway = { url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, wss, closes: [], dials: 0 };
  wss.on('connection', (ws) => {
    g.dials += 1;
    ws.on('close', (code) => g.closes.push(code));
    ws.on('message', (data) => {
      const f = JSON.parse(data.toString()) as { type: string; nonce?: string };
      if (f.type !== 'auth') return;
      const proof = sign(
        null,
        Buffer.from(
          gatewayProofText({ protocol: PROTOCOL_VERSION, machineId, gatewayNonce: NONCE, agentNonce: f.nonce ?? '' }),
        ),
        key,
      ).toString('base64');
      const list = options.gateways?.();
      ws.send(
        JSON.stringify({
          type: 'welcome',
          machine_id: machineId,
          heartbeat_ms: 60_000,
          proof,
          ...(list ? { gateways: list } : {}),
        }),
      );
      options.afterWelcome?.(ws);
    });
    ws.send(JSON.stringify({ type: 'challenge', nonce: NONCE, protocol: PROTOCOL_VERSION }));
  });
  return g;
}

function agentState(url: string): AgentState {
  return {
    gateway_url: url,
    machine_id: machineId,
    name: 'fo',
    private_key_pem: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    insecure: false,
    gateway_public_key: spki(clusterKey),
  };
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a gateway going away (1001) sends the agent to the next one it named; a rogue on the list gets nothing', async () => {
  const request = (id: string) =>
    JSON.stringify({ type: 'request', id, op: 'exec', params: {}, context: { policy: 'full' } });
  // Named second on the list, it cannot prove the cluster's key, and asks for a request right after its welcome.
  const rogue = await gateway(rogueKey, { afterWelcome: (ws) => ws.send(request('from-rogue')) });
  const good = await gateway(clusterKey, { afterWelcome: (ws) => ws.send(request('from-good')) });
  let first!: FakeGateway;
  first = await gateway(clusterKey, {
    gateways: () => [first.url, rogue.url, good.url, 'ftp://elsewhere', 'http://gw.example.com'],
    // Graceful shutdown right after the welcome: "go away, reconnect elsewhere".
    afterWelcome: (ws) => setTimeout(() => ws.close(1001, 'gateway shutting down'), 50),
  });
  const requests: string[] = [];
  const learned: string[][] = [];
  const logs: string[] = [];
  const conn = new GatewayConnection(
    agentState(first.url),
    {
      log: (m) => logs.push(m),
      onConnected: () => undefined,
      onGateways: (g) => learned.push([...g]),
      onRequest: async (frame, send) => {
        requests.push(frame.id);
        send({ type: 'response', id: frame.id, result: {} });
      },
    },
    { initialMs: 50, maxMs: 200 },
  );
  connections.push(conn);
  conn.start();
  await conn.ready;
  // Kept for the next reconnect (and the state file): the joined URL stays first; unusable URLs are dropped.
  await until('the list learned', () => learned.length > 0);
  expect(learned[0]).toEqual([rogue.url, good.url]);
  expect(conn.gateways).toEqual([first.url, rogue.url, good.url]);

  await until('the request from the good gateway', () => requests.includes('from-good')).catch((e) => {
    throw new Error(`${e}\n${logs.join('\n')}`);
  });
  expect(rogue.dials).toBeGreaterThanOrEqual(1);
  // The rogue proved nothing: refused with 4401, and its request never ran.
  expect(rogue.closes[0]).toBe(4401);
  expect(requests).toEqual(['from-good']);
  expect(conn.gatewayUrl).toBe(good.url);
});

test('the list lives in the state: an agent started with it tries the others when its own gateway is down', async () => {
  const good = await gateway(clusterKey);
  // The joined gateway is gone for good (nothing listens there any more).
  const gone = await gateway(clusterKey);
  gone.wss.close();
  const conn = new GatewayConnection(
    { ...agentState(gone.url), gateways: [good.url] },
    { log: () => undefined, onConnected: () => undefined, onRequest: async () => undefined },
    { initialMs: 50, maxMs: 200 },
  );
  connections.push(conn);
  conn.start();
  await conn.ready;
  expect(conn.gatewayUrl).toBe(good.url);
});
