import { LetKiteError } from '@letkite/protocol';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import { toolsAllowedByPolicy } from '../policy/resolve-policy';
import { errorResult, publishedTool, runTool, type ToolHandler } from './tool-handler';

interface McpSession {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** The credential the session was opened with; every later request must carry the same one. */
  credentialId: string;
  /** Whose credential it is: closing a person's sessions (sign-out everywhere, removal) finds them by this. */
  userId: string;
  accountId: string;
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** How long a POST's SSE answer is held back to see whether it is a single, quick response (sent as JSON). */
const JSON_ANSWER_WINDOW_MS = 250;

type Peek = { kind: 'json'; body: string } | { kind: 'stream' };

/** Sorts the SSE events read so far: a lone response → json; anything else (progress, a request) → stream. */
function classify(text: string, done: boolean): Peek | null {
  const events = text.split(/\r?\n\r?\n/);
  const complete = done ? events : events.slice(0, -1);
  const data: string[] = [];
  for (const event of complete) {
    const lines = event.split(/\r?\n/).filter((l) => l !== '' && !l.startsWith(':'));
    if (lines.length === 0) continue; // a keep-alive comment
    if (lines.some((l) => !l.startsWith('data:') && l !== 'event: message')) return { kind: 'stream' };
    data.push(lines.map((l) => l.slice(5).replace(/^ /, '')).join('\n'));
  }
  if (data.length > 1) return { kind: 'stream' };
  const only = data[0];
  if (only !== undefined) {
    let message: unknown;
    try {
      message = JSON.parse(only);
    } catch {
      return { kind: 'stream' };
    }
    const isResponse =
      typeof message === 'object' && message !== null && 'id' in message && ('result' in message || 'error' in message);
    if (!isResponse) return { kind: 'stream' };
    return done ? { kind: 'json', body: only } : null;
  }
  return done ? { kind: 'stream' } : null;
}

/**
 * The SDK answers every POST with an SSE stream. When that stream turns out to hold just one response, arriving
 * within JSON_ANSWER_WINDOW_MS, it is sent as a plain JSON body instead (clients must accept both): one write,
 * no event parsing — most calls. Anything else (a progress notification, a slow call, a long-poll) is passed on
 * as the SSE stream it is, from its first byte, the moment that is clear. Works on the Response only: no SDK
 * internals involved.
 */
async function preferJson(response: Response): Promise<Response> {
  if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const seen: Uint8Array[] = [];
  let text = '';
  let timer: NodeJS.Timeout | undefined;
  const window = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), JSON_ANSWER_WINDOW_MS);
  });
  let pending = reader.read();
  try {
    for (;;) {
      const r = await Promise.race([pending, window]);
      if (r === 'late') break;
      if (!r.done) {
        seen.push(r.value);
        text += decoder.decode(r.value, { stream: true });
        pending = reader.read();
      }
      const peek = classify(text, r.done);
      if (peek?.kind === 'json') {
        const headers = new Headers(response.headers);
        for (const h of ['cache-control', 'connection', 'x-accel-buffering']) headers.delete(h);
        headers.set('content-type', 'application/json');
        return new Response(peek.body, { status: response.status, headers });
      }
      if (peek?.kind === 'stream' || r.done) break;
    }
  } finally {
    clearTimeout(timer);
  }
  // Passed on as SSE: what was read first, then the rest as it comes. Cancelling it cancels the SDK's stream.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of seen) controller.enqueue(chunk);
    },
    async pull(controller) {
      const r = await pending;
      if (r.done) controller.close();
      else {
        controller.enqueue(r.value);
        pending = reader.read();
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

/** Tools this principal may call (its scopes ∧ what its policy can ever use); the rest are not even listed. */
function toolsFor(handlers: readonly ToolHandler[], principal: Principal): ToolHandler[] {
  const allowed = new Set(toolsAllowedByPolicy(principal.grant));
  return handlers.filter((h) => allowed.has(h.descriptor.name));
}

/**
 * The MCP Streamable HTTP endpoint: one transport and one MCP server per session, kept in a map. An unknown
 * session id is 404 (the client then starts a new session), as the spec asks.
 */
export class McpEndpoint {
  private readonly sessions = new Map<string, McpSession>();

  constructor(
    private readonly deps: GatewayDeps,
    private readonly handlers: readonly ToolHandler[],
  ) {}

  async handle(request: Request, principal: Principal): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const session = this.sessions.get(sessionId);
      if (!session || session.credentialId !== principal.credentialId) {
        return jsonRpcError(404, -32001, 'Session not found');
      }
      const response = await session.transport.handleRequest(request);
      return request.method === 'POST' ? preferJson(response) : response;
    }
    if (request.method !== 'POST') return jsonRpcError(400, -32000, 'Bad Request: no session id');
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return jsonRpcError(400, -32700, 'Parse error');
    }
    if (!isInitializeRequest(body)) return jsonRpcError(400, -32000, 'Bad Request: no session id');
    const session = await this.open(principal);
    return session.transport.handleRequest(request, { parsedBody: body });
  }

  /** Closes every session opened with this credential (revocation cuts live sessions at once). */
  async closeSessionsOf(credentialId: string): Promise<void> {
    for (const [id, s] of this.sessions) {
      if (s.credentialId === credentialId) {
        this.sessions.delete(id);
        await s.transport.close();
      }
    }
  }

  /** Closes every session of a person (in one account, or all): their sessions or membership were revoked. */
  async closeSessionsOfUser(userId: string, accountId?: string): Promise<number> {
    let closed = 0;
    for (const [id, s] of this.sessions) {
      if (s.userId === userId && (accountId === undefined || s.accountId === accountId)) {
        this.sessions.delete(id);
        await s.transport.close();
        closed++;
      }
    }
    return closed;
  }

  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.transport.close()));
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  private async open(principal: Principal): Promise<McpSession> {
    const server = new Server(
      { name: 'letkite', title: 'LetKite', version: this.deps.version },
      {
        capabilities: { tools: { listChanged: false } },
        instructions:
          'LetKite runs commands and file operations on real machines. Call machines_list first. Calls may be refused by policy or by the machine, or wait for a human approval.',
      },
    );
    const tools = toolsFor(this.handlers, principal);
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: tools.map((t) => publishedTool(t.descriptor)),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const handler = tools.find((t) => t.descriptor.name === req.params.name);
      if (!handler) return errorResult(new LetKiteError('not_found', `no tool "${req.params.name}"`));
      const progressToken = req.params._meta?.progressToken;
      const client = server.getClientVersion();
      return runTool(handler, req.params.arguments, {
        deps: this.deps,
        principal,
        ...(client ? { client: { name: client.name, version: client.version } } : {}),
        signal: extra.signal,
        audit: {},
        progress: async (progress, total, message) => {
          if (progressToken === undefined) return;
          await extra.sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken,
              progress,
              ...(total === undefined ? {} : { total }),
              ...(message ? { message } : {}),
            },
          });
        },
      });
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    const session: McpSession = {
      transport,
      server,
      credentialId: principal.credentialId,
      userId: principal.userId,
      accountId: principal.accountId,
    };
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return session;
  }
}
