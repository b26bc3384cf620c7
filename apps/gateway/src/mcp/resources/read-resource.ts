import { type ErrorCode, LetKiteError } from '@letkite/protocol';
import type { Principal } from '../../auth/principal';
import type { GatewayDeps } from '../../deps';
import { reachableMachines } from '../../machines/resolve-machine';
import type { CallToolResult } from '../tool-handler';
import { type HandleKind, knownHandles, machineOfHandle } from './handles';
import { parseResourceUri, type ResourceRef, staticResources, toolOfResource } from './resource-uris';

/**
 * Runs one tool as the caller, with every check the MCP endpoint makes for tools/call (scopes, the policy's
 * tools, the account's switches) and the tool's own (machines, policy, ceiling), its masking, caps and audit row.
 */
export type InvokeTool = (tool: string, args: Record<string, unknown>) => Promise<CallToolResult>;

export interface ResourceContext {
  deps: GatewayDeps;
  principal: Principal;
  invoke: InvokeTool;
  /** The tools the caller may call right now. */
  callable: () => Promise<ReadonlySet<string>>;
}

export interface ResourceContents {
  uri: string;
  mimeType: string;
  text: string;
}

/** MCP's "resource not found" (the spec's -32002). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error of a resource request. Not McpError: that puts "MCP error <code>:" into its message, and the
 * client's McpError adds it again.
 */
export class ResourceError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A resource error as JSON-RPC: not found → -32002, anything else → invalid request / internal, with our payload. */
function rpcError(e: LetKiteError, uri: string): ResourceError {
  const notFound: readonly ErrorCode[] = ['not_found', 'machine_not_found'];
  const code = notFound.includes(e.code) ? RESOURCE_NOT_FOUND : e.code === 'internal' ? -32603 : -32600;
  return new ResourceError(code, e.message, { uri, ...e.toPayload() });
}

/** The structured result of a tool run for a resource, or the refusal as a JSON-RPC error. */
async function run(ctx: ResourceContext, uri: string, tool: string, args: Record<string, unknown>) {
  const r = await ctx.invoke(tool, args);
  const s = (r.structuredContent ?? {}) as Record<string, unknown>;
  if (r.isError) {
    const code = typeof s.code === 'string' ? (s.code as ErrorCode) : 'internal';
    throw rpcError(new LetKiteError(code, String(s.message ?? 'refused'), s.details as Record<string, unknown>), uri);
  }
  return s;
}

async function onMachineOf(ctx: ResourceContext, kind: HandleKind, id: string, uri: string): Promise<string> {
  const machineId = await machineOfHandle(ctx.deps, ctx.principal, kind, id);
  // Another connection's handle looks exactly like one that never existed.
  if (machineId === null) throw rpcError(new LetKiteError('not_found', `no ${kind.replace('_', ' ')} "${id}"`), uri);
  return machineId;
}

/** At most this many machines_list pages make one resource (its pages are capped by the tool). */
const MAX_MACHINE_PAGES = 10;

/** Every machine machines_list shows the caller, following its pages (a tool without pages answers in one). */
async function allMachines(ctx: ResourceContext, uri: string): Promise<{ id: string; name: string }[]> {
  const machines: { id: string; name: string }[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_MACHINE_PAGES; page++) {
    const r = (await run(ctx, uri, 'machines_list', cursor === null ? {} : { cursor })) as {
      machines: { id: string; name: string }[];
      next_cursor?: string | null;
    };
    machines.push(...r.machines);
    cursor = r.next_cursor ?? null;
    if (cursor === null) break;
  }
  return machines;
}

function json(uri: string, value: unknown): ResourceContents {
  return { uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) };
}

/** Reads one resource through its tool. Unknown URIs are -32002, like a missing resource. */
export async function readResource(ctx: ResourceContext, uri: string): Promise<ResourceContents> {
  const ref = parseResourceUri(uri);
  if (ref === null) throw rpcError(new LetKiteError('not_found', `no resource "${uri}"`), uri);
  return readRef(ctx, uri, ref);
}

async function readRef(ctx: ResourceContext, uri: string, ref: ResourceRef): Promise<ResourceContents> {
  switch (ref.kind) {
    case 'machines':
      return json(uri, { machines: await allMachines(ctx, uri) });
    case 'machine': {
      const machines = await allMachines(ctx, uri);
      const byId = machines.find((m) => m.id === ref.id);
      const byName = machines.filter((m) => m.name === ref.id);
      const machine = byId ?? (byName.length === 1 ? byName[0] : undefined);
      if (!machine) throw rpcError(new LetKiteError('machine_not_found', `no machine "${ref.id}"`), uri);
      return json(uri, machine);
    }
    case 'terminal_screen':
    case 'terminal_scrollback': {
      const machine = await onMachineOf(ctx, 'terminal', ref.id, uri);
      const screen = await run(
        ctx,
        uri,
        'terminal_read',
        ref.kind === 'terminal_screen'
          ? { machine, terminal_id: ref.id, mode: 'visible' }
          : { machine, terminal_id: ref.id, mode: 'recent', lines: 2000 },
      );
      return { uri, mimeType: 'text/plain', text: String(screen.text ?? '') };
    }
    case 'job_output': {
      const machine = await onMachineOf(ctx, 'job', ref.id, uri);
      const info = (await run(ctx, uri, 'job_status', { machine, job_id: ref.id })) as {
        output_bytes: number;
        output_start: number;
      };
      // The newest page: what a person glancing at a job wants, within the tool's own page cap.
      const offset = Math.max(info.output_start, info.output_bytes - 60_000);
      const page = await run(ctx, uri, 'job_output', { machine, job_id: ref.id, offset, size: 60_000 });
      return { uri, mimeType: 'text/plain', text: String(page.data ?? '') };
    }
    case 'shell_sessions': {
      // Listing sessions runs nothing, but only a caller who may use shell_run has any to see.
      if (!(await ctx.callable()).has('shell_run')) {
        throw rpcError(new LetKiteError('forbidden', 'this connection may not use shell sessions'), uri);
      }
      const machines = new Map((await reachableMachines(ctx.deps, ctx.principal)).map((m) => [m.id, m.name]));
      const sessions = (await knownHandles(ctx.deps, ctx.principal, 'shell_session'))
        .filter((h) => machines.has(h.machineId))
        .map((h) => ({
          session_id: h.id,
          machine_id: h.machineId,
          machine: machines.get(h.machineId) ?? null,
          last_used_at: h.lastUsedAt,
        }));
      return json(uri, { sessions });
    }
  }
}

/** resources/list: the fixed resources the caller's tools can read, and one entry per reachable machine. */
export async function listResources(ctx: ResourceContext) {
  const tools = await ctx.callable();
  const out: { uri: string; name: string; title?: string; description?: string; mimeType?: string }[] = [];
  for (const r of staticResources) {
    const kind = r.uri === 'letkite://machines' ? 'machines' : 'shell_sessions';
    if (tools.has(toolOfResource[kind])) out.push({ ...r });
  }
  if (tools.has('machines_list')) {
    for (const m of await reachableMachines(ctx.deps, ctx.principal)) {
      out.push({
        uri: `letkite://machines/${encodeURIComponent(m.id)}`,
        name: `machine ${m.name}`,
        title: m.name,
        mimeType: 'application/json',
      });
    }
  }
  return out;
}
