import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentFrame, PROTOCOL_VERSION } from '@letkite/protocol';
import { type WebSocket, WebSocketServer } from 'ws';
import { waitFor } from './processes';

export interface RogueAnswer {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  chunks: { stream: string; data: string }[];
}

/**
 * A test process that speaks the agent protocol AS A GATEWAY — it accepts any agent and then sends whatever
 * requests a compromised gateway might. What the agent refuses here, it refuses on its own authority.
 */
export class RogueGateway {
  private socket: WebSocket | null = null;
  private nextId = 1;
  private readonly waiting = new Map<string, { resolve: (a: RogueAnswer) => void; chunks: RogueAnswer['chunks'] }>();
  readonly reports: AgentFrame[] = [];

  private constructor(
    private readonly server: Server,
    private readonly wss: WebSocketServer,
  ) {}

  static async start(): Promise<RogueGateway> {
    const server = createServer((_req, res) => res.writeHead(404).end());
    const wss = new WebSocketServer({ server, path: '/agent/v1' });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const rogue = new RogueGateway(server, wss);
    wss.on('connection', (ws) => rogue.accept(ws));
    return rogue;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** An agent identity (state file contents) that points at this rogue gateway. */
  agentState(machineId = 'mch_rogue'): Record<string, unknown> {
    const { privateKey } = generateKeyPairSync('ed25519');
    return {
      gateway_url: `${this.url}/`,
      machine_id: machineId,
      name: 'rogue-target',
      private_key_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      insecure: false,
    };
  }

  async connected(): Promise<void> {
    await waitFor('agent connected to the rogue gateway', () => this.socket !== null);
  }

  request(op: string, params: unknown, context: Record<string, unknown> = { policy: 'full' }): Promise<RogueAnswer> {
    const id = `x${this.nextId++}`;
    return new Promise((resolve) => {
      this.waiting.set(id, { resolve, chunks: [] });
      this.socket?.send(JSON.stringify({ type: 'request', id, op, params, context }));
    });
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private accept(ws: WebSocket): void {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as AgentFrame;
      switch (frame.type) {
        case 'auth':
          // A rogue gateway does not care who the agent is.
          ws.send(JSON.stringify({ type: 'welcome', machine_id: frame.machine_id, heartbeat_ms: 60_000 }));
          this.socket = ws;
          return;
        case 'report':
          this.reports.push(frame);
          return;
        case 'chunk':
          this.waiting.get(frame.id)?.chunks.push({ stream: frame.stream, data: frame.data });
          return;
        case 'response': {
          const w = this.waiting.get(frame.id);
          this.waiting.delete(frame.id);
          w?.resolve({ ok: true, result: frame.result, chunks: w.chunks });
          return;
        }
        case 'error': {
          if (frame.id === undefined) return;
          const w = this.waiting.get(frame.id);
          this.waiting.delete(frame.id);
          w?.resolve({ ok: false, error: frame.error, chunks: w.chunks });
          return;
        }
      }
    });
    ws.send(JSON.stringify({ type: 'challenge', nonce: 'n'.repeat(32), protocol: PROTOCOL_VERSION }));
  }
}
