import { LetKiteError, toLetKiteError } from '@letkite/protocol';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type InitializeRequest,
  isInitializeRequest,
  isJSONRPCRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import { refuseDisabledTransport } from '../policy/account-switches';
import type { McpSessionRecord } from './mcp-session-store';
import type { ResourceSubscriptions } from './resources/subscriptions';
import { newMcpSessionId } from './session-facts';

/** The path a legacy client POSTs its messages to (announced in the stream's `endpoint` event). */
export const LEGACY_MESSAGE_PATH = '/mcp/message';
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;
/** At most this many legacy streams per credential on one gateway (each holds a server and a connection). */
const MAX_STREAMS_PER_CREDENTIAL = 16;

/** What the legacy endpoint needs of the MCP endpoint (the same sessions, handlers and checks as /mcp). */
export interface LegacyHost {
  createServer(
    principal: Principal,
    session: McpSessionRecord,
    io: { transport: Pick<Transport, 'send' | 'close'> },
  ): Server;
  open(principal: Principal, initialize: InitializeRequest, id?: string): Promise<McpSessionRecord>;
  session(id: string, principal: Principal): Promise<McpSessionRecord | null>;
  closeSession(id: string): Promise<void>;
  subscriptions: Pick<ResourceSubscriptions, 'addChannel'>;
}

/** The server side of one SSE stream: messages to the client are `message` events on it. */
class SseStreamTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private closed = false;

  constructor(
    readonly sessionId: string,
    private readonly write: (chunk: string) => void,
    private readonly end: () => void,
  ) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the SSE stream is closed');
    this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.end();
    this.onclose?.();
  }
}

interface LegacyStream {
  principal: Principal;
  transport: SseStreamTransport;
  server: Server;
  /** Filled in by `initialize`: until then only `initialize` and `ping` are served. */
  session: McpSessionRecord;
  opened: boolean;
  /** Stops resource updates to this stream. */
  removeChannel: () => void;
}

function errorResponse(status: number, e: LetKiteError): Response {
  return new Response(JSON.stringify({ error: e.toPayload() }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * The 2024-11-05 HTTP+SSE transport, for clients that speak only it: `GET /mcp/sse` opens a stream whose first
 * event names `POST /mcp/message?sessionId=…`; the answers come back on the stream. Same bearer auth, sessions,
 * handlers and checks as `/mcp` (one long-lived server per stream instead of one per request), behind the
 * account switch `legacy_sse` (off by default: `forbidden`, `details.switch = "legacy_sse"`), read on every request.
 * A stream lives on the gateway that opened it: in a cluster the load balancer must send a session's POSTs there
 * (by `sessionId`); elsewhere they answer 404 and the client reconnects.
 */
export class LegacySseEndpoint {
  private readonly streams = new Map<string, LegacyStream>();

  constructor(
    private readonly deps: GatewayDeps,
    private readonly host: LegacyHost,
  ) {}

  async handle(request: Request, principal: Principal, path: 'sse' | 'message'): Promise<Response> {
    try {
      refuseDisabledTransport(await this.deps.policies.settings(principal.accountId), 'legacy_sse');
    } catch (err) {
      // Switched off while streams were open: they end at their next request.
      const id = new URL(request.url).searchParams.get('sessionId');
      const stream = id ? this.streams.get(id) : undefined;
      if (stream && stream.principal.credentialId === principal.credentialId) await this.end(id as string);
      return errorResponse(403, toLetKiteError(err));
    }
    if (path === 'sse') {
      if (request.method !== 'GET') return methodNotAllowed('GET');
      return this.openStream(principal);
    }
    if (request.method !== 'POST') return methodNotAllowed('POST');
    return this.message(request, principal);
  }

  /** Ends the streams whose principal matches (revocation, a person's sessions closed, shutdown). */
  closeWhere(matches: (p: Principal) => boolean): void {
    for (const [id, s] of this.streams) if (matches(s.principal)) void this.end(id);
  }

  async close(): Promise<void> {
    await Promise.all([...this.streams.keys()].map((id) => this.end(id)));
  }

  private openStream(principal: Principal): Response {
    const mine = [...this.streams.values()].filter((s) => s.principal.credentialId === principal.credentialId);
    if (mine.length >= MAX_STREAMS_PER_CREDENTIAL) {
      return errorResponse(
        429,
        new LetKiteError('rate_limited', `at most ${MAX_STREAMS_PER_CREDENTIAL} SSE streams per connection`),
      );
    }
    const id = newMcpSessionId();
    const encoder = new TextEncoder();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let keepalive: NodeJS.Timeout | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      cancel: () => {
        void this.end(id);
      },
    });
    const write = (chunk: string) => {
      try {
        controller.enqueue(encoder.encode(chunk));
      } catch {
        void this.end(id);
      }
    };
    const transport = new SseStreamTransport(id, write, () => {
      clearInterval(keepalive);
      try {
        controller.close();
      } catch {
        // already closed by the client
      }
    });
    const session: McpSessionRecord = {
      id,
      credentialId: principal.credentialId,
      userId: principal.userId,
      accountId: principal.accountId,
      clientName: null,
      clientVersion: null,
      protocolVersion: null,
      createdAt: this.deps.now().toISOString(),
      lastSeenAt: this.deps.now().toISOString(),
      closedAt: null,
    };
    // A copy the POSTs refresh (below): the server and the resource watcher read it at each call.
    principal = { ...principal };
    const server = this.host.createServer(principal, session, { transport });
    // Resource updates of this session travel on its stream, as every server message does in this transport.
    const removeChannel = this.host.subscriptions.addChannel(id, {
      principal,
      notify: (uri) => transport.send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } }),
      close: () => void this.end(id),
    });
    this.streams.set(id, { principal, transport, server, session, opened: false, removeChannel });
    void server.connect(transport);
    write(`event: endpoint\ndata: ${LEGACY_MESSAGE_PATH}?sessionId=${encodeURIComponent(id)}\n\n`);
    keepalive = setInterval(() => write(': keep-alive\n\n'), KEEPALIVE_MS);
    keepalive.unref();
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform' },
    });
  }

  private async message(request: Request, principal: Principal): Promise<Response> {
    const id = new URL(request.url).searchParams.get('sessionId');
    const stream = id ? this.streams.get(id) : undefined;
    // Another credential's stream looks exactly like a missing one.
    if (!id || !stream || stream.principal.credentialId !== principal.credentialId) {
      return errorResponse(404, new LetKiteError('not_found', 'no such SSE session (open GET /mcp/sse again)'));
    }
    // The stream's server was made with the principal of its GET: each POST brings the credential's current
    // grant (scopes, machines, policy), so an edit of the connection applies from this message on.
    Object.assign(stream.principal, principal);
    let raw: unknown;
    try {
      raw = await request.json();
    } catch {
      return errorResponse(400, new LetKiteError('invalid_params', 'the body is not JSON'));
    }
    const parsed = (Array.isArray(raw) ? raw : [raw]).map((m) => JSONRPCMessageSchema.safeParse(m));
    if (parsed.length === 0 || parsed.some((p) => !p.success)) {
      return errorResponse(400, new LetKiteError('invalid_params', 'not a JSON-RPC message'));
    }
    const messages = parsed.map((p) => p.data as JSONRPCMessage);
    for (const m of messages) {
      if (isInitializeRequest(m)) {
        if (stream.opened) return errorResponse(400, new LetKiteError('invalid_params', 'already initialized'));
        Object.assign(stream.session, await this.host.open(principal, m, id));
        stream.opened = true;
      } else if (isJSONRPCRequest(m) && m.method !== 'ping' && !stream.opened) {
        return errorResponse(400, new LetKiteError('invalid_params', 'initialize first'));
      }
    }
    // Closed (revoked, idle) since: the stream ends, as a 404 ends a Streamable HTTP session.
    if (stream.opened && !(await this.host.session(id, principal))) {
      await this.end(id);
      return errorResponse(404, new LetKiteError('not_found', 'the session was closed'));
    }
    for (const m of messages) stream.transport.onmessage?.(m);
    return new Response('Accepted', { status: 202 });
  }

  private async end(id: string): Promise<void> {
    const stream = this.streams.get(id);
    if (!stream) return;
    this.streams.delete(id);
    stream.removeChannel();
    await stream.server.close().catch(() => undefined);
    await stream.transport.close().catch(() => undefined);
    // The session ends with its stream (a reconnecting client opens a new one).
    if (stream.opened) await this.host.closeSession(id).catch(() => undefined);
  }
}

function methodNotAllowed(allow: string): Response {
  return new Response(JSON.stringify({ error: { code: 'invalid_params', message: `use ${allow}` } }), {
    status: 405,
    headers: { 'content-type': 'application/json', allow },
  });
}
