import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { toLetKiteError } from '@letkite/protocol';
import { createWebSocketStream, type WebSocketServer } from 'ws';
import { authenticateBearer, type BearerDeps } from '../auth/authenticate-bearer';
import type { TunnelRegistry } from './tunnel-registry';

/** `GET /tunnels/<tunnel_id>/connect` (a WebSocket upgrade): one TCP connection through a tunnel, for `letkite tunnel open`. */
export const TUNNEL_SOCKET_PATH = /^\/tunnels\/(tun_[A-Za-z0-9_-]{1,64})\/connect$/;

/** The tunnel id of an upgrade request for the tunnel socket, or null for any other path. */
export function tunnelSocketId(path: string): string | null {
  return TUNNEL_SOCKET_PATH.exec(path)?.[1] ?? null;
}

function refuse(socket: Duplex, status: 401 | 404 | 429, code: string): void {
  const body = JSON.stringify({ error: { code } });
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 404 ? 'Not Found' : 'Too Many Requests'}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Carries one connection of a tunnel over a WebSocket: binary messages are the connection's bytes both ways.
 * Only the credential that opened the tunnel may use it (its bearer token in Authorization). Backpressure runs
 * end to end: the WebSocket is paused while the tunnel has no credit, and the agent gets credit only as the
 * WebSocket takes what it sent.
 */
export async function handleTunnelSocket(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  tunnelId: string,
  deps: { registry: TunnelRegistry; wss: WebSocketServer; bearer: () => BearerDeps },
): Promise<void> {
  const tunnel = deps.registry.get(tunnelId);
  let principalCredential: string;
  try {
    principalCredential = (await authenticateBearer(deps.bearer(), req.headers.authorization)).credentialId;
  } catch {
    refuse(socket, 401, 'unauthenticated');
    return;
  }
  if (!tunnel || principalCredential !== tunnel.owner.credentialId) {
    refuse(socket, 404, 'not_found');
    return;
  }
  let connection: ReturnType<TunnelRegistry['connect']>;
  try {
    connection = deps.registry.connect(tunnel);
    await connection.connected;
  } catch (err) {
    const code = toLetKiteError(err).code;
    refuse(socket, code === 'rate_limited' ? 429 : 404, code);
    return;
  }
  deps.wss.handleUpgrade(req, socket, head, (ws) => {
    const stream = createWebSocketStream(ws);
    stream.on('error', () => connection.destroy());
    stream.pipe(connection);
    connection.pipe(stream);
    connection.once('close', () => {
      if (!connection.readableEnded) ws.terminate();
    });
    ws.once('close', () => connection.destroy());
  });
}
