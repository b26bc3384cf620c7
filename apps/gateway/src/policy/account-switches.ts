import { LetKiteError } from '@letkite/protocol';
import type { Principal } from '../auth/principal';
import { groupOfTool } from '../oauth/scopes';
import type { AccountSettings, PolicyStore } from '../store/policy-store';
import { resolveGrantPolicy, toolsAllowedByPolicy } from './resolve-policy';

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
 * groups the account has not switched off. Read on every request, so an edit or a switch applies at once.
 */
export async function callableTools(
  policies: Pick<PolicyStore, 'get' | 'settings'>,
  principal: Pick<Principal, 'accountId' | 'grant'>,
): Promise<{ tools: Set<string>; settings: AccountSettings; policyError: unknown }> {
  let policyError: unknown = null;
  const [policy, settings] = await Promise.all([
    resolveGrantPolicy(policies, principal.accountId, principal.grant).catch((err: unknown) => {
      policyError = err;
      return null;
    }),
    policies.settings(principal.accountId),
  ]);
  // A policy that no longer resolves (deleted) lists nothing, and a call gets resolution's own refusal.
  const allowed = policy === null ? [] : toolsAllowedByPolicy(policy, principal.grant.scopes);
  const off = new Set(settings.disabledToolGroups);
  return {
    tools: new Set(
      allowed.filter((t) => {
        const g = groupOfTool(t);
        return g === null || !off.has(g);
      }),
    ),
    settings,
    policyError,
  };
}
