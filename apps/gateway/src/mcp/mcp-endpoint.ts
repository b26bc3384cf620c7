import { LetKiteError, toLetKiteError } from '@letkite/protocol';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  readRequestBody,
  requestBodyTooLargeMessage,
  resolveMaxRequestBodySize,
} from '@modelcontextprotocol/sdk/server/requestBody.js';
import { DEFAULT_SSE_KEEP_ALIVE_MS as SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  CompleteRequestSchema,
  ElicitResultSchema,
  type InitializeRequest,
  isInitializeRequest,
  isJSONRPCError,
  isJSONRPCResponse,
  type JSONRPCMessage,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Principal } from '../auth/principal';
import type { EventPayload } from '../coordination/coordination';
import type { GatewayDeps } from '../deps';
import {
  callableTools,
  refuseDisabledToolGroup,
  refuseDisabledTransport,
  transportOf,
} from '../policy/account-switches';
import { parseServiceInput } from '../services/define-service';
import { complete } from './completion';
import { approveThroughClient, isPendingAnswer } from './elicitation';
import { LegacySseEndpoint } from './legacy-sse';
import { levelOfOutcome, sessionLogger } from './logging';
import type { McpSessionRecord, McpSessionStore } from './mcp-session-store';
import { openMcpSessionStore } from './open-mcp-session-store';
import { listResources, type ResourceContext, readResource } from './resources/read-resource';
import { resourceTemplates } from './resources/resource-uris';
import { ResourceSubscriptions } from './resources/subscriptions';
import { newMcpSessionId, SessionFactBook, type SessionFacts } from './session-facts';
import {
  type CallToolResult,
  errorResult,
  publishedTool,
  runTool,
  type ToolHandler,
  toolCallContext,
} from './tool-handler';

/** Coordination topic: a credential was revoked; every gateway aborts its running calls (`credential_id`). */
export const CREDENTIAL_REVOKED_TOPIC = 'credential.revoked';
/** Coordination topic: a person's sessions were closed (`user_id`, `account_id` or null for every account). */
export const USER_SESSIONS_CLOSED_TOPIC = 'user.sessions-closed';
/**
 * Coordination topic: a client cancelled one of its requests (`session_id`, `request_id`). Each request has its own
 * throw-away server, so the `notifications/cancelled` arrives on another one (on any gateway of the cluster) than
 * the call it cancels: it is announced, and the gateway running the call aborts it, which stops the agent's process
 * wherever its socket is held (docs/design/cluster.md).
 */
export const MCP_REQUEST_CANCELLED_TOPIC = 'mcp.request-cancelled';

/** How long a session may go without a request before it answers 404 (LETKITE_MCP_SESSION_IDLE_MS). */
export const DEFAULT_MCP_SESSION_IDLE_MS = 24 * 3_600_000;
/** A session's `last_seen_at` is written at most this often (a busy session does not write on every request). */
const TOUCH_EVERY_MS = 10_000;
/** After aborting a revoked credential's call, how long its handler may take to answer before its stream is cut. */
const ABORT_GRACE_MS = 1000;

/**
 * The JSON Schema validator every throw-away server shares (it checks elicitation answers). The SDK builds a new
 * Ajv instance, with its keyword tables, for each server it is not given one: about a tenth of a light tool call's
 * gateway CPU (bench/throughput profile), for a validator that holds nothing per request.
 */
const sharedSchemaValidator = new AjvJsonSchemaValidator();

/** A tool call running on this gateway, so a revocation announced by any gateway can abort it. */
interface RunningCall {
  credentialId: string;
  userId: string;
  accountId: string;
  abort: AbortController;
  transport: { close(): Promise<void> };
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * A POST's JSON body, read once (the endpoint looks at it before the SDK does), with the SDK's own size bound and
 * error answers; or the Response refusing it. A body of declared length is read with `text()`, which the Node
 * server answers from the socket's bytes, without making the web stream (a new Request) that `body` needs.
 */
async function readJsonBody(request: Request): Promise<unknown> {
  const maxBytes = resolveMaxRequestBodySize(undefined);
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) return jsonRpcError(413, -32000, requestBodyTooLargeMessage(maxBytes));
  let text: string;
  try {
    if (Number.isInteger(declared) && declared >= 0) text = await request.text();
    else {
      const read = await readRequestBody(request, maxBytes);
      if (read.tooLarge) return jsonRpcError(413, -32000, requestBodyTooLargeMessage(maxBytes));
      text = read.text;
    }
    return JSON.parse(text) as unknown;
  } catch {
    return jsonRpcError(400, -32700, 'Parse error: Invalid JSON');
  }
}

/** How long a POST's JSON answer is held back to be sent as a plain JSON body rather than an SSE stream. */
const JSON_ANSWER_WINDOW_MS = 250;

/**
 * Whether answering these messages can send something to the client before the answer, on the request's own
 * stream: only tools/call does (progress when the call asked with a `progressToken`, log notifications once the
 * session set a level, an elicitation when the session can show a URL). Anything else is answered by the SDK in
 * JSON mode (`enableJsonResponse`): no SSE framing to write and to read back.
 */
export function mayStreamBeforeAnswer(body: unknown, facts: SessionFacts): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    if (typeof m !== 'object' || m === null || (m as { method?: unknown }).method !== 'tools/call') return false;
    if (facts.logLevel !== undefined || facts.elicitationUrl === true) return true;
    const params = (m as { params?: { _meta?: { progressToken?: unknown } } }).params;
    return params?._meta?.progressToken !== undefined;
  });
}

/**
 * A JSON-mode answer sent as a plain JSON body when it comes within JSON_ANSWER_WINDOW_MS (most calls: one
 * write). A slower one is sent as the SSE stream the SDK would have written: it opens at once and carries
 * keep-alive comments (so proxies do not cut a long call) until the answer, one `message` event per response.
 * `closed` settles when the transport closes unanswered (a revocation cuts the call): the stream then ends.
 */
export async function answerJsonOrStream(answer: Promise<Response>, closed: Promise<void>): Promise<Response> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), JSON_ANSWER_WINDOW_MS);
  });
  const first = await Promise.race([answer, late, closed.then(() => 'closed' as const)]).finally(() =>
    clearTimeout(timer),
  );
  if (first instanceof Response) return first;
  const encoder = new TextEncoder();
  let keepalive: NodeJS.Timeout | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const end = () => {
        clearInterval(keepalive);
        try {
          controller.close();
        } catch {
          // the client went away first
        }
      };
      if (first === 'closed') return end();
      keepalive = setInterval(() => controller.enqueue(encoder.encode(': keep-alive\n\n')), SSE_KEEP_ALIVE_MS);
      void Promise.race([answer.then((r) => r.text()), closed.then(() => null)])
        .then((text) => {
          if (text === null || text === '') return;
          const parsed: unknown = JSON.parse(text);
          for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
            controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
          }
        })
        .catch(() => undefined)
        .finally(end);
    },
    cancel() {
      clearInterval(keepalive);
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    },
  });
}

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
 * A request that may stream (mayStreamBeforeAnswer) gets the SDK's SSE stream. When that stream turns out to hold
 * just one response, arriving within JSON_ANSWER_WINDOW_MS, it is sent as a plain JSON body instead (clients must
 * accept both), as the other requests are. Anything else (a progress notification, a slow call, a long-poll) is passed on
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

/**
 * The MCP Streamable HTTP endpoint, with our own session ids kept in the store and a throw-away MCP server and
 * transport per request (docs/design/coordination.md): `initialize` records a session, every later request must
 * name a live one of the same credential (404 otherwise, as the spec asks, and the client initializes again), so
 * any gateway serves any session. Revocation closes the rows and is announced to every gateway, which aborts the
 * credential's running calls.
 */
export class McpEndpoint {
  private readonly sessions: McpSessionStore;
  private readonly idleMs: number;
  private readonly running = new Set<RunningCall>();
  private readonly unsubscribe: (() => void)[];
  /** What sessions declared (capabilities, log level), shared with the other gateways. */
  readonly facts: SessionFactBook;
  /** The 2024-11-05 HTTP+SSE transport (`/mcp/sse`, `/mcp/message`), on the same sessions and handlers. */
  readonly legacySse: LegacySseEndpoint;
  /** resources/subscribe: who watches what, and the watcher of the streams held here. */
  readonly subscriptions: ResourceSubscriptions;
  /** Transports of this gateway waiting for a client's answer to a request we sent (an elicitation), by session. */
  private readonly awaitingAnswers = new Map<string, Set<WebStandardStreamableHTTPServerTransport>>();
  /** Tool calls running here that a client may cancel, by session id and JSON-RPC request id. */
  private readonly cancellableRequests = new Map<string, AbortController>();

  constructor(
    private readonly deps: GatewayDeps,
    private readonly handlers: readonly ToolHandler[],
    options: { sessions?: McpSessionStore; idleMs?: number; watchMs?: number } = {},
  ) {
    this.sessions = options.sessions ?? openMcpSessionStore(deps.store);
    this.idleMs = options.idleMs ?? DEFAULT_MCP_SESSION_IDLE_MS;
    this.facts = new SessionFactBook(deps.coordination);
    this.subscriptions = new ResourceSubscriptions(deps.coordination, (p) => this.quietContext(p), options.watchMs);
    this.legacySse = new LegacySseEndpoint(deps, this);
    const events = deps.coordination.events;
    this.unsubscribe = [
      events.subscribe(CREDENTIAL_REVOKED_TOPIC, (p: EventPayload) => {
        if (typeof p.credential_id !== 'string') return;
        this.abortRunning((c) => c.credentialId === p.credential_id);
        this.legacySse.closeWhere((c) => c.credentialId === p.credential_id);
        this.subscriptions.closeWhere((c) => c.credentialId === p.credential_id);
      }),
      events.subscribe(USER_SESSIONS_CLOSED_TOPIC, (p: EventPayload) => {
        if (typeof p.user_id !== 'string') return;
        const accountId = typeof p.account_id === 'string' ? p.account_id : null;
        const match = (c: { userId: string; accountId: string }) =>
          c.userId === p.user_id && (accountId === null || c.accountId === accountId);
        this.abortRunning(match);
        this.legacySse.closeWhere(match);
        this.subscriptions.closeWhere(match);
      }),
      events.subscribe(MCP_REQUEST_CANCELLED_TOPIC, (p: EventPayload) => {
        if (typeof p.session_id !== 'string' || typeof p.request_id !== 'string') return;
        this.cancellableRequests
          .get(`${p.session_id} ${p.request_id}`)
          ?.abort(new LetKiteError('timeout', 'the client cancelled the request'));
      }),
    ];
  }

  async handle(request: Request, principal: Principal): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    // The account switches are read on every request: a transport switched off stops an open session here, at
    // its next request, without a restart.
    try {
      refuseDisabledTransport(await this.deps.policies.settings(principal.accountId), transportOf(request));
    } catch (err) {
      const session = sessionId ? await this.liveSession(sessionId, principal) : null;
      if (session) await this.sessions.close(session.id, this.deps.now().toISOString());
      const e = toLetKiteError(err);
      return new Response(JSON.stringify({ error: e.toPayload() }), {
        status: 403,
        headers: { 'content-type': 'application/json' },
      });
    }
    // GET: the session's standalone SSE stream, on which it hears `notifications/resources/updated`.
    if (request.method === 'GET') {
      if (!request.headers.get('accept')?.includes('text/event-stream')) return methodNotAllowed();
      if (!sessionId) return jsonRpcError(400, -32000, 'Bad Request: no session id');
      const session = await this.liveSession(sessionId, principal);
      if (!session) return jsonRpcError(404, -32001, 'Session not found');
      return this.notificationStream(session.id, principal);
    }
    if (request.method === 'DELETE') {
      if (!sessionId) return jsonRpcError(400, -32000, 'Bad Request: no session id');
      const session = await this.liveSession(sessionId, principal);
      if (!session) return jsonRpcError(404, -32001, 'Session not found');
      await this.sessions.close(session.id, this.deps.now().toISOString());
      this.subscriptions.closeSession(session.id);
      return new Response(null, { status: 200 });
    }
    if (request.method !== 'POST') return methodNotAllowed();
    if (sessionId) {
      const session = await this.liveSession(sessionId, principal);
      if (!session) return jsonRpcError(404, -32001, 'Session not found');
      const body = await readJsonBody(request);
      if (body instanceof Response) return body;
      const waiting = this.waitingFor(body, session.id);
      if (waiting) {
        // Handed to the waiting request's server as its transport would (a stateless transport serves one
        // request only, so not through handleRequest again); answers are acknowledged with 202 like the SDK does.
        for (const m of waiting.messages) waiting.transport.onmessage?.(m);
        return new Response(null, { status: 202 });
      }
      return this.serve(request, principal, session, body);
    }
    const body = await readJsonBody(request);
    if (body instanceof Response) return body;
    if (!isInitializeRequest(body)) return jsonRpcError(400, -32000, 'Bad Request: no session id');
    const session = await this.open(principal, body);
    const response = await this.serve(request, principal, session, body);
    const headers = new Headers(response.headers);
    headers.set('mcp-session-id', session.id);
    return new Response(response.body, { status: response.status, headers });
  }

  /** Closes every session opened with this credential, on every gateway (revocation cuts live sessions at once). */
  async closeSessionsOf(credentialId: string): Promise<void> {
    await this.sessions.closeForCredential(credentialId, this.deps.now().toISOString());
    await this.deps.coordination.events.publish(CREDENTIAL_REVOKED_TOPIC, { credential_id: credentialId });
  }

  /** Closes every session of a person (in one account, or all): their sessions or membership were revoked. */
  async closeSessionsOfUser(userId: string, accountId?: string): Promise<number> {
    const closed = await this.sessions.closeForUser(userId, accountId, this.deps.now().toISOString());
    await this.deps.coordination.events.publish(USER_SESSIONS_CLOSED_TOPIC, {
      user_id: userId,
      account_id: accountId ?? null,
    });
    return closed;
  }

  /** Forgets sessions closed or idle for a week (they answer 404 either way); run by one gateway (main.ts). */
  async pruneSessions(): Promise<number> {
    const cutoff = this.deps.now().getTime() - Math.max(this.idleMs, 7 * 24 * 3_600_000);
    return this.sessions.prune(new Date(cutoff).toISOString());
  }

  /** Gateway shutdown: stops listening for revocations and aborts the calls still running here. */
  async close(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    this.facts.close();
    this.subscriptions.close();
    await this.legacySse.close();
    this.abortRunning(() => true);
    await Promise.all([...this.running].map((c) => c.transport.close()));
  }

  /** The live session `id` if it was opened with this principal's credential, else null; marks it seen. */
  private async liveSession(id: string, principal: Principal): Promise<McpSessionRecord | null> {
    const now = this.deps.now();
    const session = await this.sessions.touch(id, {
      now: now.toISOString(),
      idleBefore: new Date(now.getTime() - this.idleMs).toISOString(),
      // Written often enough that an active session never looks idle, however short the idle time.
      touchEveryMs: Math.min(TOUCH_EVERY_MS, this.idleMs / 10),
    });
    return session && session.credentialId === principal.credentialId ? session : null;
  }

  /**
   * Records a session from its `initialize` (under `id` when the transport made one up before, as the legacy SSE
   * transport does), with what the client declared that later requests need.
   */
  async open(principal: Principal, initialize: InitializeRequest, id?: string): Promise<McpSessionRecord> {
    const client = initialize.params.clientInfo;
    const session: McpSessionRecord = {
      id: id ?? newMcpSessionId(),
      credentialId: principal.credentialId,
      userId: principal.userId,
      accountId: principal.accountId,
      clientName: client.name.slice(0, 200),
      clientVersion: client.version.slice(0, 100),
      protocolVersion: initialize.params.protocolVersion.slice(0, 40),
      createdAt: this.deps.now().toISOString(),
      lastSeenAt: this.deps.now().toISOString(),
      closedAt: null,
    };
    await this.sessions.open(session);
    // URL-mode elicitation must be declared as such: `elicitation: {}` alone means form mode only.
    if (initialize.params.capabilities.elicitation?.url !== undefined) {
      await this.facts.set(session.id, { elicitationUrl: true });
    }
    return session;
  }

  /** The handler of a tool the principal may call right now, or the refusal tools/call would answer. */
  private async callableHandler(
    principal: Principal,
    name: string,
  ): Promise<{ handler: ToolHandler } | { refusal: CallToolResult }> {
    const handler = this.handlers.find((t) => t.descriptor.name === name);
    if (!handler) return { refusal: errorResult(new LetKiteError('not_found', `no tool "${name}"`)) };
    const callable = await callableTools(this.deps.policies, principal);
    try {
      refuseDisabledToolGroup(callable.settings, handler.descriptor.name);
    } catch (err) {
      return { refusal: errorResult(toLetKiteError(err)) };
    }
    if (!callable.tools.has(handler.descriptor.name)) {
      if (callable.policyError) return { refusal: errorResult(toLetKiteError(callable.policyError)) };
      return { refusal: errorResult(new LetKiteError('not_found', `no tool "${name}"`)) };
    }
    return { handler };
  }

  /**
   * A resource context whose tool runs make every check but write no audit row: the subscription watcher's
   * periodic looks (a person's own reads and subscribe requests are audited as tool calls).
   */
  private quietContext(principal: Principal): ResourceContext {
    const invoke = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
      const found = await this.callableHandler(principal, name);
      if ('refusal' in found) return found.refusal;
      const { handler } = found;
      try {
        const ctx = toolCallContext({
          deps: this.deps,
          principal,
          signal: AbortSignal.timeout(30_000),
          progress: async () => {},
          audit: {},
        });
        const result = (await handler.service.run(
          ctx,
          parseServiceInput(handler.descriptor.input, args, name),
        )) as Record<string, unknown>;
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
      } catch (err) {
        return errorResult(toLetKiteError(err));
      }
    };
    return {
      deps: this.deps,
      principal,
      invoke,
      callable: async () => (await callableTools(this.deps.policies, principal)).tools,
    };
  }

  /**
   * The standalone stream of a session: server notifications not tied to a request (resource updates). Held by
   * this gateway; a newer GET of the same session replaces it. Comments keep proxies from closing it.
   */
  private notificationStream(sessionId: string, principal: Principal): Response {
    const encoder = new TextEncoder();
    let remove = () => {};
    let keepalive: NodeJS.Timeout | undefined;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const end = () => {
      clearInterval(keepalive);
      remove();
      try {
        controller.close();
      } catch {
        // already closed
      }
    };
    const write = (chunk: string) => {
      try {
        controller.enqueue(encoder.encode(chunk));
      } catch {
        end();
      }
    };
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      cancel: () => end(),
    });
    remove = this.subscriptions.addChannel(sessionId, {
      principal,
      notify: async (uri) => {
        const message = { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } };
        write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
      },
      close: end,
    });
    write(': stream open\n\n');
    keepalive = setInterval(() => write(': keep-alive\n\n'), 15_000);
    keepalive.unref();
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform' },
    });
  }

  /** Closes one session (its transport ended). */
  async closeSession(id: string): Promise<void> {
    await this.sessions.close(id, this.deps.now().toISOString());
    this.subscriptions.closeSession(id);
  }

  /** The live session `id` of this principal, or null (closed, idle, unknown or another credential's). */
  async session(id: string, principal: Principal): Promise<McpSessionRecord | null> {
    return this.liveSession(id, principal);
  }

  /**
   * The transport of this gateway that waits for the answers a POST carries (the client answering our
   * elicitation/create), or null. Answers that reach another gateway are dropped there: the call waiting for one
   * also watches the approval itself, so only a decline is missed (the call then answers when the approval does).
   */
  private waitingFor(
    body: unknown,
    sessionId: string,
  ): { transport: WebStandardStreamableHTTPServerTransport; messages: JSONRPCMessage[] } | null {
    const waiting = this.awaitingAnswers.get(sessionId);
    if (!waiting || waiting.size === 0) return null;
    const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
    if (messages.length === 0 || !messages.every((m) => isJSONRPCResponse(m) || isJSONRPCError(m))) return null;
    // One waiting transport per session in practice; the SDK drops an answer to an id it never sent.
    const transport = [...waiting][waiting.size - 1];
    return transport ? { transport, messages } : null;
  }

  /**
   * Runs one request so that a `notifications/cancelled` for it, received by any gateway, aborts it: `run` gets the
   * SDK's extra with a signal that also fires on the announced cancellation. The session id scopes the request id,
   * and a session is bound to one credential, so a client can only cancel its own calls.
   */
  private async cancellable<E extends { signal: AbortSignal; requestId: string | number }, T>(
    sessionId: string,
    extra: E,
    run: (extra: E) => Promise<T>,
  ): Promise<T> {
    const key = `${sessionId} ${String(extra.requestId)}`;
    const cancel = new AbortController();
    this.cancellableRequests.set(key, cancel);
    try {
      return await run({ ...extra, signal: AbortSignal.any([extra.signal, cancel.signal]) });
    } finally {
      if (this.cancellableRequests.get(key) === cancel) this.cancellableRequests.delete(key);
    }
  }

  private abortRunning(matches: (c: RunningCall) => boolean): void {
    for (const call of this.running) {
      if (!matches(call)) continue;
      call.abort.abort(new LetKiteError('unauthenticated', 'the credential or session was revoked'));
      // The handler gets a moment to answer with its error; a handler that ignores the signal is cut off.
      setTimeout(() => void call.transport.close().catch(() => undefined), ABORT_GRACE_MS).unref();
    }
  }

  /**
   * One request on a throw-away server and stateless transport; the session comes from the store. A request
   * that cannot send anything before its answer is answered in the SDK's JSON mode (see answerJsonOrStream);
   * the others get the SDK's SSE stream, still sent as JSON when it turns out to hold one quick response.
   */
  private async serve(
    request: Request,
    principal: Principal,
    session: McpSessionRecord,
    body: unknown,
  ): Promise<Response> {
    const stream = mayStreamBeforeAnswer(body, this.facts.get(session.id));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !stream,
    });
    let closed!: () => void;
    const whenClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    transport.onclose = closed;
    const server = this.createServer(principal, session, {
      transport,
      awaitAnswers: (on) => {
        let set = this.awaitingAnswers.get(session.id);
        if (on) {
          if (!set) {
            set = new Set();
            this.awaitingAnswers.set(session.id, set);
          }
          set.add(transport);
        } else if (set) {
          set.delete(transport);
          if (set.size === 0) this.awaitingAnswers.delete(session.id);
        }
      },
    });
    await server.connect(transport);
    const answer = transport.handleRequest(request, { parsedBody: body });
    return stream ? preferJson(await answer) : answerJsonOrStream(answer, whenClosed);
  }

  /**
   * The MCP server of one principal and session, every handler registered; the Streamable HTTP endpoint makes one
   * per request, the legacy SSE transport one per stream. `transport` is what a revocation closes.
   */
  createServer(
    principal: Principal,
    session: McpSessionRecord,
    io: { transport: Pick<Transport, 'send' | 'close'>; awaitAnswers?: (on: boolean) => void },
  ): Server {
    const server = new Server(
      { name: 'letkite', title: 'LetKite', version: this.deps.version },
      {
        capabilities: {
          tools: { listChanged: false },
          resources: { subscribe: true, listChanged: false },
          logging: {},
          completions: {},
        },
        jsonSchemaValidator: sharedSchemaValidator,
        instructions:
          'LetKite runs commands and file operations on real machines. Call machines_list first. Calls may be refused by policy or by the machine, or wait for a human approval.',
      },
    );
    const { transport } = io;
    // Read at each call: a legacy SSE stream's session learns the client's name at its `initialize`.
    const clientOf = () =>
      session.clientName === null
        ? undefined
        : { name: session.clientName, ...(session.clientVersion ? { version: session.clientVersion } : {}) };
    // Listed and callable tools are worked out on every request (scopes ∧ the policy's current revision ∧ the
    // account's tool-group switches), so an edit of the policy or a switch applies to the next request.
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const { tools } = await callableTools(this.deps.policies, principal);
      return {
        tools: this.handlers.filter((h) => tools.has(h.descriptor.name)).map((t) => publishedTool(t.descriptor)),
      };
    });
    /** One tool call with every check tools/call makes; resources read through it too. */
    const invoke = async (
      name: string,
      args: unknown,
      signal: AbortSignal,
      progress: (progress: number, total?: number, message?: string) => Promise<void>,
    ): Promise<CallToolResult> => {
      const found = await this.callableHandler(principal, name);
      if ('refusal' in found) return found.refusal;
      const { handler } = found;
      const call: RunningCall = {
        credentialId: principal.credentialId,
        userId: principal.userId,
        accountId: principal.accountId,
        abort: new AbortController(),
        transport,
      };
      this.running.add(call);
      const client = clientOf();
      try {
        return await runTool(handler, args, {
          deps: this.deps,
          principal,
          ...(client ? { client } : {}),
          signal: AbortSignal.any([signal, call.abort.signal]),
          audit: {},
          progress,
        });
      } finally {
        this.running.delete(call);
      }
    };
    // A client's cancellation arrives on a request of its own: announced to every gateway (see the topic).
    server.setNotificationHandler(CancelledNotificationSchema, async (n) => {
      if (n.params.requestId === undefined) return;
      await this.deps.coordination.events.publish(MCP_REQUEST_CANCELLED_TOPIC, {
        session_id: session.id,
        request_id: String(n.params.requestId),
      });
    });
    server.setRequestHandler(CallToolRequestSchema, (req, sdkExtra) =>
      this.cancellable(session.id, sdkExtra, async (extra) => {
        const progressToken = req.params._meta?.progressToken;
        const progress = async (value: number, total?: number, message?: string) => {
          if (progressToken === undefined) return;
          await extra.sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken,
              progress: value,
              ...(total === undefined ? {} : { total }),
              ...(message ? { message } : {}),
            },
          });
        };
        const log = sessionLogger(this.facts.get(session.id).logLevel, (n) => extra.sendNotification(n));
        const started = performance.now();
        const tool = req.params.name;
        await log('debug', { event: 'tool_call', tool });
        let result = await invoke(tool, req.params.arguments, extra.signal, progress);
        if (isPendingAnswer(result) && this.facts.get(session.id).elicitationUrl) {
          // The client can show a URL: it is sent the approval page and the call waits for the decision there.
          io.awaitAnswers?.(true);
          try {
            const decided = await approveThroughClient({
              deps: this.deps,
              principal,
              pending: result.structuredContent,
              signal: extra.signal,
              progress,
              elicit: (params, done) =>
                extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema, {
                  signal: AbortSignal.any([extra.signal, done]),
                  timeout: 24 * 3_600_000,
                }),
              // Straight to the transport: the SDK sends this notification only to a client whose capabilities
              // it saw in `initialize`, and this throw-away server did not (the session's facts did).
              notify: (n) => transport.send({ jsonrpc: '2.0', ...n }, { relatedRequestId: extra.requestId }),
            });
            await log('info', { event: 'approval', tool, status: decided });
            if (decided === 'approved' || decided === 'denied') {
              result = await invoke(tool, req.params.arguments, extra.signal, progress);
            }
          } finally {
            io.awaitAnswers?.(false);
          }
        }
        const outcome = outcomeOf(result);
        await log(levelOfOutcome(outcome), {
          event: 'tool_result',
          tool,
          outcome,
          duration_ms: Math.round(performance.now() - started),
        });
        return result;
      }),
    );
    const resourceContext = (signal: AbortSignal) => ({
      deps: this.deps,
      principal,
      invoke: (tool: string, args: Record<string, unknown>) => invoke(tool, args, signal, async () => {}),
      callable: async () => (await callableTools(this.deps.policies, principal)).tools,
    });
    server.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => ({
      resources: await listResources(resourceContext(extra.signal)),
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: resourceTemplates.map((t) => ({ ...t })),
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => ({
      contents: [await readResource(resourceContext(extra.signal), req.params.uri)],
    }));
    // A subscription is only taken for a resource the caller can read now (the read is its check).
    server.setRequestHandler(SubscribeRequestSchema, async (req, extra) => {
      await readResource(resourceContext(extra.signal), req.params.uri);
      try {
        await this.subscriptions.subscribe(session.id, req.params.uri);
      } catch (err) {
        throw new McpError(-32600, toLetKiteError(err).message);
      }
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
      await this.subscriptions.unsubscribe(session.id, req.params.uri);
      return {};
    });
    server.setRequestHandler(CompleteRequestSchema, async (req) => complete(this.deps, principal, req.params));
    // The level outlives this throw-away server: kept with the session's facts (every gateway hears of it).
    server.setRequestHandler(SetLevelRequestSchema, async (req) => {
      await this.facts.set(session.id, { logLevel: req.params.level });
      return {};
    });
    return server;
  }
}

/** The outcome code of a tool result, as the audit row and the log notification name it. */
function outcomeOf(result: CallToolResult): string {
  const s = result.structuredContent;
  if (result.isError) return typeof s?.code === 'string' ? s.code : 'internal';
  return isPendingAnswer(result) ? 'approval_pending' : 'ok';
}

function methodNotAllowed(): Response {
  return new Response(
    JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null }),
    {
      status: 405,
      headers: { 'content-type': 'application/json', allow: 'POST, DELETE' },
    },
  );
}
