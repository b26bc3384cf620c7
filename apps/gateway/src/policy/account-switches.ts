import { LetKiteError } from '@letkite/protocol';
import type { Principal } from '../auth/principal';
import { groupOfTool } from '../oauth/scopes';
import type { AccountSettings, PolicyStore } from '../store/policy-store';
import { type GrantPolicySource, grantPolicySource, policyOfSource, toolsAllowedByPolicy } from './resolve-policy';

/**
 * The MCP transports an owner can switch off for the whole account (issue #14). `legacy_sse` governs the old
 * HTTP+SSE transport: it is stored and shown now, and the transport checks it when it exists.
 */
export const mcpTransports = ['mcp_http', 'stdio_bridge', 'legacy_sse'] as const;
export type McpTransport = (typeof mcpTransports)[number];

/**
 * The header `letkite mcp` (the stdio bridge) sends on every request it forwards. It is the client's own word:
 * with MCP over HTTP off and the bridge on, a client that sends it is let through as a bridge. Switching the
 * bridge off is exact; switching HTTP off alone only stops clients that do not claim to be the bridge.
 */
export const TRANSPORT_HEADER = 'x-letkite-transport';

/** The transport a request to /mcp arrived by. */
export function transportOf(request: Request): McpTransport {
  return request.headers.get(TRANSPORT_HEADER)?.trim().toLowerCase() === 'stdio' ? 'stdio_bridge' : 'mcp_http';
}

/** Whether a switch lets a transport through. */
export function transportEnabled(settings: AccountSettings, transport: McpTransport): boolean {
  switch (transport) {
    case 'mcp_http':
      return settings.mcpHttp;
    case 'stdio_bridge':
      return settings.stdioBridge;
    case 'legacy_sse':
      return settings.legacySse;
  }
}

/** Refuses with `forbidden` (details.switch names it) when the account switched this transport off. */
export function refuseDisabledTransport(settings: AccountSettings, transport: McpTransport): void {
  if (transportEnabled(settings, transport)) return;
  throw new LetKiteError('forbidden', `the account's owner switched off ${transportLabels[transport]}`, {
    layer: 'account',
    switch: transport,
  });
}

const transportLabels: Record<McpTransport, string> = {
  mcp_http: 'MCP over HTTP',
  stdio_bridge: 'the stdio bridge (letkite mcp)',
  legacy_sse: 'the legacy SSE transport',
};

/**
 * Refuses with `blocked_by_policy` when the tool's group is switched off for the whole account. Base tools
 * (machines_list, approval_wait) belong to no group and are never switched off.
 */
export function refuseDisabledToolGroup(settings: AccountSettings, tool: string): void {
  const group = groupOfTool(tool);
  if (group === null || !settings.disabledToolGroups.includes(group)) return;
  throw new LetKiteError('blocked_by_policy', `the account's owner switched off the "${group}" tools`, {
    layer: 'account',
    group,
    tool,
  });
}

/**
 * The tools a principal may call right now: its scopes ∧ what its policy (current revision) can ever use ∧ the
 * groups the account has not switched off. The policy and the switches are read on every request, so an edit or a
 * switch applies at once; only the work done from them is kept (see `toolSetOf`).
 */
export async function callableTools(
  policies: Pick<PolicyStore, 'get' | 'settings'>,
  principal: Pick<Principal, 'accountId' | 'grant'>,
): Promise<{ tools: ReadonlySet<string>; settings: AccountSettings; policyError: unknown }> {
  let policyError: unknown = null;
  const [source, settings] = await Promise.all([
    grantPolicySource(policies, principal.accountId, principal.grant).catch((err: unknown) => {
      policyError = err;
      return null;
    }),
    policies.settings(principal.accountId),
  ]);
  let tools: ReadonlySet<string>;
  try {
    // A policy that no longer resolves (deleted, invalid) lists nothing, and a call gets resolution's own refusal.
    tools = source === null ? new Set() : toolSetOf(source, principal.grant.scopes, settings.disabledToolGroups);
  } catch (err) {
    policyError = err;
    tools = new Set();
  }
  return { tools, settings, policyError };
}

/** At most this many tool sets are kept (one per policy revision, scopes and switches in use: a few per account). */
const MAX_TOOL_SETS = 1000;

/**
 * Tool sets already worked out, by everything they are made from: the policy's revision (a stored one's
 * content is compared too, so a policy deleted and created again under the same name and version is not
 * mistaken for the old one), the grant's scopes and the groups switched off. Parsing the policy and working out
 * its permissions is most of a light call's policy check; an edit, a switch or another grant is another key.
 * Inline policies (old API tokens) are not kept: their object is all they have for an identity.
 */
const toolSets = new Map<string, { content: string; tools: ReadonlySet<string> }>();

function toolSetOf(
  source: GrantPolicySource,
  scopes: Principal['grant']['scopes'],
  disabledGroups: readonly string[],
): ReadonlySet<string> {
  if (source.kind === 'inline') return computeToolSet(source, scopes, disabledGroups);
  const revision =
    source.kind === 'builtin'
      ? `builtin ${source.name}`
      : `stored ${source.stored.accountId} ${source.stored.name} ${source.stored.version}`;
  const content = source.kind === 'builtin' ? '' : source.stored.source;
  const key = `${revision}\n${[...scopes].join(' ')}\n${[...disabledGroups].sort().join(' ')}`;
  const kept = toolSets.get(key);
  if (kept && kept.content === content) return kept.tools;
  const tools = computeToolSet(source, scopes, disabledGroups);
  toolSets.delete(key);
  toolSets.set(key, { content, tools });
  if (toolSets.size > MAX_TOOL_SETS) {
    const oldest = toolSets.keys().next().value;
    if (oldest !== undefined) toolSets.delete(oldest);
  }
  return tools;
}

function computeToolSet(
  source: GrantPolicySource,
  scopes: Principal['grant']['scopes'],
  disabledGroups: readonly string[],
): ReadonlySet<string> {
  const off = new Set(disabledGroups);
  const allowed = toolsAllowedByPolicy(policyOfSource(source), scopes);
  return new Set(
    allowed.filter((t) => {
      const g = groupOfTool(t);
      return g === null || !off.has(g);
    }),
  );
}
