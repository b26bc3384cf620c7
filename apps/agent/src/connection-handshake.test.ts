import { createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { encodeDataFrame, gatewayProofText, PROTOCOL_VERSION } from '@letkite/protocol';
import { afterEach, describe, expect, test } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { GatewayConnection } from './connection';
import type { AgentState } from './state';

/**
 * A real GatewayConnection against a real WebSocket server playing the gateway: which frames the agent obeys at
 * which point of the handshake.
 */
const machineId = 'mch_hs';
const gatewayKey = generateKeyPairSync('ed25519').privateKey;
const spki = (k: KeyObject) => createPublicKey(k).export({ format: 'der', type: 'spki' }).toString('base64');
const GATEWAY_NONCE = 'g'.repeat(43);

interface Run {
  requests: string[];
  logs: string[];
  closeCode: Promise<number>;
  conn: GatewayConnection;
  wss: WebSocketServer;
}

const runs: Run[] = [];
afterEach(async () => {
  for (const r of runs.splice(0)) {
    await r.conn.stop();
    for (const c of r.wss.clients) c.terminate();
    r.wss.close();
  }
});

function welcome(agentNonce: string, opts: { key?: KeyObject; machine?: string; nonce?: string } = {}) {
  const proof = sign(
    null,
    Buffer.from(
      gatewayProofText({
        protocol: PROTOCOL_VERSION,
        machineId: opts.machine ?? machineId,
        gatewayNonce: opts.nonce ?? GATEWAY_NONCE,
        agentNonce,
      }),
    ),
    opts.key ?? gatewayKey,
  ).toString('base64');
  return { type: 'welcome', machine_id: opts.machine ?? machineId, heartbeat_ms: 60_000, proof };
}

const request = (id: string) => ({ type: 'request', id, op: 'exec', params: {}, context: { policy: 'full' } });

/** Starts a gateway that runs `script` on each socket: `onAuth` gets the agent's nonce. */
async function run(script: {
  onOpen?: (ws: WebSocket) => void;
  onAuth?: (ws: WebSocket, agentNonce: string) => void;
}): Promise<Run> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/agent/v1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  let resolveClose: (code: number) => void = () => {};
  const closeCode = new Promise<number>((r) => {
    resolveClose = r;
  });
  wss.on('connection', (ws) => {
    ws.on('close', (code) => resolveClose(code));
    ws.on('message', (data) => {
      const f = JSON.parse(data.toString()) as { type: string; nonce?: string };
      if (f.type === 'auth') script.onAuth?.(ws, f.nonce ?? '');
    });
    if (script.onOpen) script.onOpen(ws);
    else ws.send(JSON.stringify({ type: 'challenge', nonce: GATEWAY_NONCE, protocol: PROTOCOL_VERSION }));
  });
  const state: AgentState = {
    gateway_url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}/`,
    machine_id: machineId,
    name: 'hs',
    private_key_pem: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    insecure: false,
    gateway_public_key: spki(gatewayKey),
  };
  const requests: string[] = [];
  const logs: string[] = [];
  const conn = new GatewayConnection(
    state,
    {
      log: (m) => logs.push(m),
      onConnected: () => {},
      onRequest: async (frame, send) => {
        requests.push(frame.id);
        send({ type: 'response', id: frame.id, result: {} });
      },
    },
    { initialMs: 60_000, maxMs: 60_000 },
  );
  const r = { requests, logs, closeCode, conn, wss };
  runs.push(r);
  conn.start();
  return r;
}

describe('before the gateway proves its identity the agent obeys nothing', () => {
  const early: [string, unknown][] = [
    ['request', request('r1')],
    ['cancel', { type: 'cancel', id: 'r1' }],
    ['credit', { type: 'credit', id: 'r1', bytes: 1024 }],
    ['entry', { type: 'entry', id: 'r1', entry: { kind: 'dir', path: 'x', mode: 0o755 } }],
    ['entry_end', { type: 'entry_end', id: 'r1', bytes: 0, sha256: '0'.repeat(64) }],
    ['stream_end', { type: 'stream_end', id: 'r1', sha256: '0'.repeat(64) }],
  ];

  test.each(early)('a %s frame sent with the challenge closes the socket (1008)', async (_type, frame) => {
    const r = await run({
      onOpen: (ws) => {
        ws.send(JSON.stringify({ type: 'challenge', nonce: GATEWAY_NONCE, protocol: PROTOCOL_VERSION }));
        ws.send(JSON.stringify(frame));
        ws.send(JSON.stringify(request('after')));
      },
    });
    expect(await r.closeCode).toBe(1008);
    expect(r.requests).toEqual([]);
    expect(r.logs.join('\n')).toMatch(/refused .* before the gateway proved its identity/);
  });

  test('a welcome sent with the challenge, before the agent chose its nonce, is refused', async () => {
    const r = await run({
      onOpen: (ws) => {
        ws.send(JSON.stringify({ type: 'challenge', nonce: GATEWAY_NONCE, protocol: PROTOCOL_VERSION }));
        ws.send(JSON.stringify(welcome('a'.repeat(43))));
        ws.send(JSON.stringify(request('after')));
      },
    });
    expect(await r.closeCode).toBe(4401);
    expect(r.requests).toEqual([]);
    expect(r.logs.join('\n')).toMatch(/failed to prove the identity pinned at join/);
  });

  test('a welcome before any challenge is refused', async () => {
    const r = await run({
      onOpen: (ws) => {
        ws.send(JSON.stringify(welcome('a'.repeat(43))));
        ws.send(JSON.stringify(request('after')));
      },
    });
    expect(await r.closeCode).toBe(1008);
    expect(r.requests).toEqual([]);
  });

  test('a binary data frame before the welcome closes the socket', async () => {
    const r = await run({
      onAuth: (ws) => {
        ws.send(Buffer.from(encodeDataFrame('r1', Buffer.from('hello'))), { binary: true });
        ws.send(JSON.stringify(request('after')));
      },
    });
    expect(await r.closeCode).toBe(1008);
    expect(r.requests).toEqual([]);
  });

  test.each([
    ['signed by another key', (n: string) => welcome(n, { key: generateKeyPairSync('ed25519').privateKey })],
    ['over another agent nonce (replayed)', () => welcome('o'.repeat(43))],
    ['over another gateway nonce', (n: string) => welcome(n, { nonce: 'h'.repeat(43) })],
    ['for another machine', (n: string) => welcome(n, { machine: 'mch_other' })],
    ['without a proof', () => ({ type: 'welcome', machine_id: machineId, heartbeat_ms: 60_000 })],
  ])('a welcome %s is refused (4401) and the request behind it never runs', async (_what, make) => {
    const r = await run({
      onAuth: (ws, n) => {
        ws.send(JSON.stringify(make(n)));
        ws.send(JSON.stringify(request('after')));
      },
    });
    expect([4401, 1008]).toContain(await r.closeCode);
    expect(r.requests).toEqual([]);
  });

  test('a challenge of another protocol is refused (4400)', async () => {
    const r = await run({
      onOpen: (ws) => ws.send(JSON.stringify({ type: 'challenge', nonce: GATEWAY_NONCE, protocol: 1 })),
    });
    expect(await r.closeCode).toBe(4400);
    expect(r.logs.join('\n')).toMatch(/protocol 1/);
  });

  test('control: after a valid proof the same request runs; a second welcome is then refused', async () => {
    let socket: WebSocket | null = null;
    const r = await run({
      onAuth: (ws, n) => {
        socket = ws;
        ws.send(JSON.stringify(welcome(n)));
        ws.send(JSON.stringify(request('after')));
      },
    });
    await r.conn.ready;
    await new Promise((res) => setTimeout(res, 100));
    expect(r.requests).toEqual(['after']);
    (socket as WebSocket | null)?.send(JSON.stringify(welcome('x'.repeat(43))));
    expect(await r.closeCode).toBe(1008);
    expect(r.logs.join('\n')).toMatch(/refused a second welcome .* out of turn/);
  });
});

test('a state without a pinned gateway key cannot even build a connection', () => {
  const state = {
    gateway_url: 'http://127.0.0.1:1/',
    machine_id: machineId,
    name: 'hs',
    private_key_pem: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    insecure: false,
  };
  expect(
    () => new GatewayConnection(state, { log: () => {}, onConnected: () => {}, onRequest: async () => {} }),
  ).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
});
