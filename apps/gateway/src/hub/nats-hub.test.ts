import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  decodeDataFragments,
  decodeDataFrame,
  encodeDataFrame,
  type GatewayFrame,
  type RequestContext,
} from '@letkite/protocol';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { AgentSession } from './agent-session';
import { NatsHub } from './nats-hub';

/**
 * Two NatsHubs (two gateways) in one process against the real NATS server on 127.0.0.1:4222. The agent side is a
 * real loopback WebSocket held by one of them, speaking the wire protocol by hand (so a test controls exactly what
 * the agent answers, including what a compromised one would).
 */
interface Pair {
  session: AgentSession;
  agent: WebSocket;
  received: (GatewayFrame | { binary: Uint8Array })[];
  closed: Promise<number>;
}

const servers: WebSocketServer[] = [];
const sockets: WebSocket[] = [];
const prefix = `lktest-${randomUUID().slice(0, 8)}`;
let ncA: NatsConnection;
let ncB: NatsConnection;
let hubA: NatsHub;
let hubB: NatsHub;

beforeAll(async () => {
  ncA = await connect({ servers: '127.0.0.1:4222' });
  ncB = await connect({ servers: '127.0.0.1:4222' });
  hubA = await NatsHub.start({ nc: ncA, gatewayId: 'gw-a', prefix, presenceTtlMs: 3000 });
  hubB = await NatsHub.start({ nc: ncB, gatewayId: 'gw-b', prefix, presenceTtlMs: 3000 });
});

afterAll(async () => {
  await hubA?.close();
  await hubB?.close();
  for (const s of sockets.splice(0)) s.terminate();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  await (await ncA.jetstreamManager()).streams.delete(`KV_${prefix}-presence`).catch(() => undefined);
  await ncA?.close();
  await ncB?.close();
});

async function connectAgent(machineId: string, hub: NatsHub): Promise<Pair> {
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
  const session: AgentSession = new AgentSession(machineId, ws, 60_000, {
    onReport: () => undefined,
    onClose: () => hub.detach(session),
    log: () => undefined,
  });
  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      const decoded = decodeDataFragments(data as Buffer[]);
      if (decoded) session.handleData(decoded.id, decoded.bytes, decoded.frame);
      return;
    }
    session.handleFrame(JSON.parse(String(data)));
  });
  await hub.attach(session);
  return { session, agent, received, closed };
}

async function until<T>(read: () => T | undefined | Promise<T | undefined>, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

function nextRequest(pair: Pair, after = 0) {
  return until(() => {
    const f = pair.received.slice(after).find((x) => 'type' in x && x.type === 'request');
    return f && 'type' in f && f.type === 'request' ? f : undefined;
  });
}

const context: RequestContext = { policy: {}, actor: 'token:test' };
const execParams = { command: 'echo hi', timeout_ms: 1000, max_output_bytes: 100 };
const execResult = { exit_code: 0, signal: null, duration_ms: 3, truncated: false, timed_out: false };

describe('NatsHub across two gateways', () => {
  let pair: Pair;

  test('a machine held by gateway B is online on gateway A', async () => {
    pair = await connectAgent('mch_1', hubB);
    await until(async () => ((await hubA.online(['mch_1', 'mch_2'])).has('mch_1') ? true : undefined));
    expect([...(await hubA.online(['mch_1', 'mch_2']))]).toEqual(['mch_1']);
    expect(hubA.holderOf('mch_1')).toBe('gw-b');
    expect(hubB.holderOf('mch_1')).toBe('gw-b');
  });

  test('a call on A runs on the socket B holds: chunks first, then the validated result', async () => {
    const chunks: string[] = [];
    const before = pair.received.length;
    const call = hubA.call('mch_1', 'exec', execParams, context, {
      timeoutMs: 5000,
      onChunk: (stream, data) => chunks.push(`${stream}:${data}`),
    });
    const req = await nextRequest(pair, before);
    expect(req.op).toBe('exec');
    expect(req.params).toEqual(execParams);
    expect(req.context.actor).toBe('token:test');
    pair.agent.send(JSON.stringify({ type: 'chunk', id: req.id, stream: 'stdout', data: 'hi\n' }));
    pair.agent.send(JSON.stringify({ type: 'response', id: req.id, result: execResult }));
    expect(await call).toEqual(execResult);
    expect(chunks).toEqual(['stdout:hi\n']);
  });

  test('a malformed answer is protocol_error on the calling gateway too', async () => {
    const before = pair.received.length;
    const call = hubA.call('mch_1', 'exec', execParams, context, { timeoutMs: 5000 });
    const req = await nextRequest(pair, before);
    pair.agent.send(JSON.stringify({ type: 'response', id: req.id, result: { exit_code: 'zero' } }));
    await expect(call).rejects.toMatchObject({ code: 'protocol_error' });
  });

  test("an agent's error comes back with its code", async () => {
    const before = pair.received.length;
    const call = hubA.call('mch_1', 'job_status', { job_id: 'job_AAAAAAAAAAAAAAAA' }, context, { timeoutMs: 5000 });
    const req = await nextRequest(pair, before);
    pair.agent.send(
      JSON.stringify({ type: 'error', id: req.id, error: { code: 'not_found', message: 'no such job' } }),
    );
    await expect(call).rejects.toMatchObject({ code: 'not_found' });
  });

  test('aborting on A sends cancel to the agent on B', async () => {
    const before = pair.received.length;
    const abort = new AbortController();
    const call = hubA.call('mch_1', 'exec', execParams, context, { timeoutMs: 5000, signal: abort.signal });
    const req = await nextRequest(pair, before);
    abort.abort();
    await expect(call).rejects.toMatchObject({ code: 'timeout' });
    await until(() =>
      pair.received.some((f) => 'type' in f && f.type === 'cancel' && f.id === req.id) ? true : undefined,
    );
  });

  test('a stream crosses: credit to A, records and data to the agent re-addressed, events before the end', async () => {
    const before = pair.received.length;
    const stream = hubA.stream('mch_1', 'transfer_receive', { path: '/tmp/dst' }, context, { timeoutMs: 5000 });
    const req = await nextRequest(pair, before);
    pair.agent.send(JSON.stringify({ type: 'credit', id: req.id, bytes: 4096 }));
    const payload = new TextEncoder().encode('bytes across gateways');
    stream.push({ type: 'entry', entry: { path: '', kind: 'file', mode: 0o644, size: payload.length } });
    stream.push({ type: 'data', bytes: payload.length, frame: [encodeDataFrame('r999', payload)] });
    stream.push({ type: 'stream_end', sha256: 'a'.repeat(64) });
    await until(() =>
      pair.received.slice(before).some((f) => 'type' in f && f.type === 'stream_end') ? true : undefined,
    );
    const sha256 = 'b'.repeat(64);
    pair.agent.send(
      JSON.stringify({
        type: 'response',
        id: req.id,
        result: { kind: 'file', bytes: 21, files: 1, sha256, skipped: [] },
      }),
    );
    expect((await stream.result).sha256).toBe(sha256);
    const events = [];
    for await (const e of stream.events) events.push(e);
    expect(events).toEqual([{ type: 'credit', bytes: 4096 }]);
    const after = pair.received.slice(before);
    expect(after.map((f) => ('type' in f ? f.type : 'data'))).toEqual(['request', 'entry', 'data', 'stream_end']);
    const data = after.find((f) => 'binary' in f) as { binary: Uint8Array };
    const decoded = decodeDataFrame(data.binary);
    expect(decoded?.id).toBe(req.id);
    expect(new TextDecoder().decode(decoded?.payload)).toBe('bytes across gateways');
  });

  test('the agent reconnecting through A evicts its older socket on B, and calls from B then go to A', async () => {
    const again = await connectAgent('mch_1', hubA);
    expect(await pair.closed).toBe(4000);
    await until(() => (hubB.holderOf('mch_1') === 'gw-a' ? true : undefined));
    expect(hubA.holderOf('mch_1')).toBe('gw-a');
    const call = hubB.call('mch_1', 'exec', execParams, context, { timeoutMs: 5000 });
    const req = await nextRequest(again);
    again.agent.send(JSON.stringify({ type: 'response', id: req.id, result: execResult }));
    expect(await call).toEqual(execResult);
  });

  test('a live claim outlasts the presence TTL, and a newer claim from any gateway evicts the socket', async () => {
    const held = await connectAgent('mch_4', hubA);
    await new Promise((r) => setTimeout(r, 3500));
    expect((await hubB.online(['mch_4'])).has('mch_4')).toBe(true);
    // A third gateway claims the machine (its agent reconnected there): A's socket must close itself.
    const kv = await ncB.jetstream().views.kv(`${prefix}-presence`);
    await kv.put(Buffer.from('mch_4').toString('base64url'), JSON.stringify({ gateway: 'gw-c' }));
    expect(await held.closed).toBe(4000);
    await until(() => (hubB.holderOf('mch_4') === 'gw-c' ? true : undefined));
  });

  test('a machine whose socket closed goes offline everywhere', async () => {
    const last = await connectAgent('mch_3', hubB);
    await until(async () => ((await hubA.online(['mch_3'])).has('mch_3') ? true : undefined));
    last.agent.close();
    await until(async () => ((await hubA.online(['mch_3'])).has('mch_3') ? undefined : true));
    await expect(hubA.call('mch_3', 'exec', execParams, context, { timeoutMs: 1000 })).rejects.toMatchObject({
      code: 'machine_offline',
    });
  });
});

describe('NatsHub: messages over the size limit, and a holder that dies', () => {
  let ncS: NatsConnection;
  let ncT: NatsConnection;
  let small: NatsHub;
  let smallHolder: NatsHub;

  beforeAll(async () => {
    ncS = await connect({ servers: '127.0.0.1:4222' });
    ncT = await connect({ servers: '127.0.0.1:4222' });
    // 16 KiB messages: what a server with a low max_payload forces, so every large message goes in parts.
    small = await NatsHub.start({
      nc: ncS,
      gatewayId: 'gw-small',
      prefix,
      presenceTtlMs: 3000,
      maxMessageBytes: 16_384,
    });
    smallHolder = await NatsHub.start({
      nc: ncT,
      gatewayId: 'gw-small-holder',
      prefix,
      presenceTtlMs: 3000,
      maxMessageBytes: 16_384,
    });
  });

  afterAll(async () => {
    await small?.close();
    await smallHolder?.close();
    await ncS?.close();
    await ncT?.close();
  });

  test('a result and params larger than one message cross in parts, byte for byte', async () => {
    const pair = await connectAgent('mch_big', smallHolder);
    await until(() => (small.holderOf('mch_big') === 'gw-small-holder' ? true : undefined));
    // 300 KB of content each way: about 19 parts of 16 KiB.
    const content = Buffer.alloc(300_000, 'x').toString('base64').slice(0, 300_000);
    const write = small.call('mch_big', 'write_file', { path: '/tmp/big', content, encoding: 'base64' }, context, {
      timeoutMs: 5000,
    });
    const req = await nextRequest(pair);
    expect(req.op).toBe('write_file');
    expect((req.params as { content: string }).content).toBe(content);
    pair.agent.send(
      JSON.stringify({ type: 'response', id: req.id, result: { bytes: 225_000, sha256: 'c'.repeat(64) } }),
    );
    expect(await write).toEqual({ bytes: 225_000, sha256: 'c'.repeat(64) });

    const before = pair.received.length;
    const read = small.call('mch_big', 'read_file', { path: '/tmp/big' }, context, { timeoutMs: 5000 });
    const r2 = await nextRequest(pair, before);
    const result = {
      content,
      encoding: 'base64',
      size: 225_000,
      sha256: 'c'.repeat(64),
      offset: 0,
      length: 225_000,
      truncated: false,
    };
    pair.agent.send(JSON.stringify({ type: 'response', id: r2.id, result }));
    expect(await read).toMatchObject({ content, size: 225_000 });
  });

  test('params no agent frame could carry are refused before anything is sent', async () => {
    const content = 'y'.repeat(3 * 1024 * 1024);
    await expect(
      small.call('mch_big', 'write_file', { path: '/tmp/huge', content }, context, { timeoutMs: 5000 }),
    ).rejects.toMatchObject({ code: 'too_large' });
  });

  test('a call routed to a gateway that dies (no goodbye) fails as offline long before its timeout', async () => {
    const ncDead = await connect({ servers: '127.0.0.1:4222' });
    const doomed = await NatsHub.start({ nc: ncDead, gatewayId: 'gw-doomed', prefix, presenceTtlMs: 30_000 });
    const pair = await connectAgent('mch_doomed', doomed);
    await until(() => (hubA.holderOf('mch_doomed') === 'gw-doomed' ? true : undefined));
    const started = Date.now();
    const call = hubA.call('mch_doomed', 'exec', execParams, context, { timeoutMs: 60_000 });
    await nextRequest(pair);
    // What kill -9 leaves: the connection is gone, nothing was deleted or answered.
    await ncDead.close();
    await expect(call).rejects.toMatchObject({ code: 'machine_offline' });
    expect(Date.now() - started).toBeLessThan(15_000);
    pair.agent.terminate();
  }, 30_000);
});
