import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import WebSocket from 'ws';
import { HandshakeAdmission } from './handshake-admission';

test('admits up to the bound, then refuses until one settles; release is idempotent', () => {
  const a = new HandshakeAdmission(2);
  const r1 = a.tryAdmit();
  const r2 = a.tryAdmit();
  expect(r1).not.toBeNull();
  expect(r2).not.toBeNull();
  expect(a.tryAdmit()).toBeNull();
  expect(a.refused).toBe(1);
  r1?.();
  r1?.();
  expect(a.pending).toBe(1);
  expect(a.tryAdmit()).not.toBeNull();
  expect(a.tryAdmit()).toBeNull();
});

test('Retry-After is spread over its range', () => {
  expect(new HandshakeAdmission(1, [1, 5], () => 0).retryAfter()).toBe(1);
  expect(new HandshakeAdmission(1, [1, 5], () => 1).retryAfter()).toBe(5);
  expect(new HandshakeAdmission(1, [1, 5], () => 0.5).retryAfter()).toBe(3);
  expect(() => new HandshakeAdmission(0)).toThrow(RangeError);
});

test('a refused upgrade gets 503 with Retry-After and a rate_limited body, before any WebSocket work', async () => {
  const admission = new HandshakeAdmission(1, [4, 4]);
  admission.tryAdmit(); // the one slot is taken
  const server = createServer();
  server.on('upgrade', (_req, socket) => admission.refuse(socket));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent/v1`);
    const res = await new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve) => {
      ws.on('unexpected-response', (_req, r) => {
        let body = '';
        r.on('data', (c: Buffer) => {
          body += c.toString();
        });
        r.on('end', () => resolve({ status: r.statusCode ?? 0, retryAfter: r.headers['retry-after'], body }));
      });
      ws.on('error', () => {});
    });
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('4');
    expect(JSON.parse(res.body).error.code).toBe('rate_limited');
    ws.terminate();
  } finally {
    server.close();
  }
});
