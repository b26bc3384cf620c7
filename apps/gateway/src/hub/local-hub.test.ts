import type { AddressInfo } from 'node:net';
import {
  decodeDataFragments,
  decodeDataFrame,
  encodeDataFrame,
  type GatewayFrame,
  type RequestContext,
} from '@letkite/protocol';
import { afterEach, describe, expect, test } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { AgentSession } from './agent-session';
import { LocalHub } from './local-hub';

/**
 * Real sockets on loopback: the gateway side is a real AgentSession; the agent side is the raw socket, speaking
 * the wire protocol by hand so a test can make it answer what a compromised agent would.
 */
interface Pair {
  session: AgentSession;
  agent: WebSocket;
  /** Frames the gateway sent to the agent, in order. */
  received: (GatewayFrame | { binary: Uint8Array })[];
  closed: Promise<number>;
}

const servers: WebSocketServer[] = [];
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function connect(machineId: string): Promise<Pair> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  const serverSide = new Promise<WebSocket>((r) => server.once('connection', r));
  const agent = new WebSocket(`ws://127.0.0.1:${port}`);
  sockets.push(agent);
  await new Promise((r) => agent.once('open', r));
  const ws = await serverSide;
  ws.binaryType = 'fragments';
  sockets.push(ws);
  const received: Pair['received'] = [];
  agent.on('message', (data, isBinary) => {
    if (isBinary) received.push({ binary: new Uint8Array(data as Buffer) });
    else received.push(JSON.parse(String(data)) as GatewayFrame);
  });
  const closed = new Promise<number>((r) => agent.once('close', (code) => r(code)));
  let session: AgentSession | null = null;
  session = new AgentSession(machineId, ws, 60_000, {
    onReport: () => undefined,
    onClose: () => undefined,
    log: () => undefined,
  });
  // As agent-endpoint.ts does after the handshake: binary messages are data frames, text ones JSON frames.
  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      const decoded = decodeDataFragments(data as Buffer[]);
      if (decoded) session?.handleData(decoded.id, decoded.bytes, decoded.frame);
      return;
    }
    session?.handleFrame(JSON.parse(String(data)));
  });
  return { session, agent, received, closed };
}

async function until<T>(read: () => T | undefined, ms = 2000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = read();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function requestOf(pair: Pair): Extract<GatewayFrame, { type: 'request' }> {
  const frame = pair.received.find((f) => 'type' in f && f.type === 'request');
  if (!frame || !('type' in frame) || frame.type !== 'request') throw new Error('no request yet');
  return frame;
}

const context: RequestContext = { policy: {}, actor: 'test' };
const execResult = { exit_code: 0, signal: null, duration_ms: 3, truncated: false, timed_out: false };

describe('LocalHub presence', () => {
  test('a reconnecting agent replaces its older socket, and the old one going away does not unseat the new', async () => {
    const hub = new LocalHub();
    const first = await connect('mch_a');
    const second = await connect('mch_a');
    expect(hub.attach(first.session)).toBe(true);
    expect(hub.attach(second.session)).toBe(true);
    expect(second.session.epoch).toBeGreaterThan(first.session.epoch);
    expect(await first.closed).toBe(4000);
    hub.detach(first.session);
    expect([...(await hub.online(['mch_a', 'mch_b']))]).toEqual(['mch_a']);
    expect(hub.epochOf('mch_a')).toBe(second.session.epoch);
    await hub.close();
  });

  test('a registration older than the holder closes itself and the newer socket keeps the machine', async () => {
    const hub = new LocalHub();
    const newer = await connect('mch_a');
    const older = await connect('mch_a');
    expect(hub.attach(newer.session, 10)).toBe(true);
    expect(hub.attach(older.session, 5)).toBe(false);
    expect(await older.closed).toBe(4000);
    expect(hub.epochOf('mch_a')).toBe(10);
    expect(newer.agent.readyState).toBe(WebSocket.OPEN);
    await hub.close();
  });

  test('a newer holder elsewhere evicts the local socket; an older claim is ignored', async () => {
    const hub = new LocalHub();
    const pair = await connect('mch_a');
    hub.attach(pair.session, 3);
    expect(hub.supersede('mch_a', 2)).toBe(false);
    expect(hub.supersede('mch_b', 99)).toBe(false);
    expect((await hub.online(['mch_a'])).has('mch_a')).toBe(true);
    expect(hub.supersede('mch_a', 4)).toBe(true);
    expect(await pair.closed).toBe(4000);
    expect((await hub.online(['mch_a'])).has('mch_a')).toBe(false);
    // A later local registration is newer than every epoch seen so far.
    const again = await connect('mch_a');
    hub.attach(again.session);
    expect(again.session.epoch).toBeGreaterThan(4);
    await hub.close();
  });
});

describe('LocalHub calls', () => {
  test('a machine without a socket is machine_offline, for calls and streams alike', async () => {
    const hub = new LocalHub();
    await expect(
      hub.call('mch_x', 'exec', { command: 'true', timeout_ms: 1000, max_output_bytes: 10 }, context, {
        timeoutMs: 1000,
      }),
    ).rejects.toMatchObject({ code: 'machine_offline' });
    const stream = hub.stream('mch_x', 'transfer_send', { path: '/tmp/x' }, context, { timeoutMs: 1000 });
    await expect(stream.result).rejects.toMatchObject({ code: 'machine_offline' });
    const events = [];
    for await (const e of stream.events) events.push(e);
    expect(events).toEqual([]);
  });

  test('the result is validated against the registry: a malformed answer is protocol_error naming the fields', async () => {
    const hub = new LocalHub();
    const pair = await connect('mch_a');
    hub.attach(pair.session);
    const call = hub.call('mch_a', 'exec', { command: 'true', timeout_ms: 1000, max_output_bytes: 10 }, context, {
      timeoutMs: 2000,
    });
    const req = await until(() => (pair.received.length > 0 ? requestOf(pair) : undefined));
    expect(req.op).toBe('exec');
    pair.agent.send(JSON.stringify({ type: 'response', id: req.id, result: { ...execResult, exit_code: 'zero' } }));
    await expect(call).rejects.toMatchObject({
      code: 'protocol_error',
      details: { op: 'exec', fields: ['exit_code'] },
    });
    await hub.close();
  });

  test('a valid answer comes back typed, after its chunks', async () => {
    const hub = new LocalHub();
    const pair = await connect('mch_a');
    hub.attach(pair.session);
    const chunks: string[] = [];
    const call = hub.call('mch_a', 'exec', { command: 'echo hi', timeout_ms: 1000, max_output_bytes: 10 }, context, {
      timeoutMs: 2000,
      onChunk: (stream, data) => chunks.push(`${stream}:${data}`),
    });
    const req = await until(() => (pair.received.length > 0 ? requestOf(pair) : undefined));
    pair.agent.send(JSON.stringify({ type: 'chunk', id: req.id, stream: 'stdout', data: 'hi\n' }));
    pair.agent.send(JSON.stringify({ type: 'response', id: req.id, result: { ...execResult, extra: 'dropped' } }));
    const result = await call;
    expect(result).toEqual(execResult);
    expect(chunks).toEqual(['stdout:hi\n']);
    await hub.close();
  });

  test('a stream delivers every event before it ends, pushes reach the agent, and data is re-addressed', async () => {
    const hub = new LocalHub();
    const pair = await connect('mch_a');
    hub.attach(pair.session);
    const stream = hub.stream('mch_a', 'transfer_receive', { path: '/tmp/dst' }, context, { timeoutMs: 2000 });
    const req = await until(() => (pair.received.length > 0 ? requestOf(pair) : undefined));
    expect(req.op).toBe('transfer_receive');
    // The agent grants credit twice and answers right after: both credits are read before the stream ends.
    pair.agent.send(JSON.stringify({ type: 'credit', id: req.id, bytes: 100 }));
    pair.agent.send(JSON.stringify({ type: 'credit', id: req.id, bytes: 200 }));
    // Data received on another call (here a frame addressed to "r999") is pushed on and must arrive as this call's.
    const payload = new TextEncoder().encode('hello bytes');
    stream.push({ type: 'entry', entry: { path: '', kind: 'file', mode: 0o644, size: payload.length } });
    stream.push({ type: 'data', bytes: payload.length, frame: [encodeDataFrame('r999', payload)] });
    stream.push({ type: 'stream_end', sha256: 'a'.repeat(64) });
    await until(() => (pair.received.some((f) => 'type' in f && f.type === 'stream_end') ? true : undefined));
    const sha256 = 'b'.repeat(64);
    pair.agent.send(
      JSON.stringify({
        type: 'response',
        id: req.id,
        result: { kind: 'file', bytes: 11, files: 1, sha256, skipped: [] },
      }),
    );
    const result = await stream.result;
    expect(result.sha256).toBe(sha256);
    const events = [];
    for await (const e of stream.events) events.push(e);
    expect(events).toEqual([
      { type: 'credit', bytes: 100 },
      { type: 'credit', bytes: 200 },
    ]);
    const binary = pair.received.find((f) => 'binary' in f) as { binary: Uint8Array };
    const decoded = decodeDataFrame(binary.binary);
    expect(decoded?.id).toBe(req.id);
    expect(new TextDecoder().decode(decoded?.payload)).toBe('hello bytes');
    const types = pair.received.map((f) => ('type' in f ? f.type : 'data'));
    expect(types).toEqual(['request', 'entry', 'data', 'stream_end']);
    // After the call settled, pushes are dropped.
    stream.push({ type: 'credit', bytes: 1 });
    await new Promise((r) => setTimeout(r, 20));
    expect(pair.received).toHaveLength(4);
    await hub.close();
  });

  test('an agent streaming far past its credit to a reader that does not read is cut off', async () => {
    const hub = new LocalHub();
    const pair = await connect('mch_a');
    hub.attach(pair.session);
    const stream = hub.stream('mch_a', 'transfer_send', { path: '/tmp/src' }, context, { timeoutMs: 5000 });
    const req = await until(() => (pair.received.length > 0 ? requestOf(pair) : undefined));
    // Nobody reads `events`: without the bound, everything the agent sends would pile up in the gateway.
    const frame = encodeDataFrame(req.id, new Uint8Array(1000 * 1000));
    for (let i = 0; i < 70; i += 1) pair.agent.send(frame);
    await expect(stream.result).rejects.toMatchObject({ code: 'protocol_error' });
    await until(() => (pair.received.some((f) => 'type' in f && f.type === 'cancel') ? true : undefined));
    await hub.close();
  });
});
