import { toolNames } from '@letkite/policy';
import { protectedResourceMetadataUrl } from '../oauth/metadata';
import { formatScope, groupOfTool, type ToolGroup, toolGroupNames, toolGroups } from '../oauth/scopes';
import type { Principal } from './principal';

/**
 * HTTP-level access rules of `/mcp` besides the bearer itself: which browser origins may call it (DNS rebinding
 * and foreign pages), the CORS answer for those that may, and the `WWW-Authenticate` challenges that send an
 * OAuth client to discovery (401) or to ask for more scopes (403 step-up).
 */

/** A request without `Origin` is not from a browser page; with one, it must be ours or explicitly allowed. */
export function mcpOriginAllowed(origin: string | undefined, publicUrl: string, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  return origin === new URL(publicUrl).origin || allowed.includes(origin);
}

/** CORS headers for an allowed browser origin. Bearer tokens travel in a header, so no credentials mode. */
export function mcpCorsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': 'Mcp-Session-Id, WWW-Authenticate, Mcp-Protocol-Version',
    Vary: 'Origin',
  };
}

export function mcpPreflightHeaders(origin: string): Record<string, string> {
  return {
    ...mcpCorsHeaders(origin),
    'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
    'Access-Control-Allow-Headers':
      'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID',
    'Access-Control-Max-Age': '600',
  };
}

function quote(value: string): string {
  return `"${value.replace(/["\\]/g, '')}"`;
}

/** RFC 6750 §3 / RFC 9728 §5.1: where the client finds how to get a token, and why this one was refused. */
export function bearerChallenge(
  publicUrl: string,
  refusal?: { error: 'invalid_token' | 'insufficient_scope'; description: string; scope?: string },
): string {
  const parts = [`resource_metadata=${quote(protectedResourceMetadataUrl(publicUrl))}`];
  if (refusal) {
    parts.push(`error=${quote(refusal.error)}`, `error_description=${quote(refusal.description)}`);
    if (refusal.scope !== undefined) parts.push(`scope=${quote(refusal.scope)}`);
  }
  return `Bearer ${parts.join(', ')}`;
}

/** The groups a grant's tool list covers. */
function grantedGroups(scopes: readonly string[]): ToolGroup[] {
  return toolGroupNames.filter((g) => (toolGroups[g] as readonly string[]).some((t) => scopes.includes(t)));
}

/**
 * For a `tools/call` of a real tool that the connection's scopes leave out, the scope to ask for (what it has
 * plus the tool's group); null when more scopes would not help (no such tool, or already in scope).
 */
export function stepUpScope(principal: Principal, message: unknown): string | null {
  if (principal.kind !== 'connection' || principal.grant.scopes === '*') return null;
  const calls = Array.isArray(message) ? message : [message];
  const scopes = principal.grant.scopes;
  for (const m of calls) {
    if (typeof m !== 'object' || m === null || (m as { method?: unknown }).method !== 'tools/call') continue;
    const name = (m as { params?: { name?: unknown } }).params?.name;
    if (typeof name !== 'string' || !(toolNames as readonly string[]).includes(name) || scopes.includes(name)) continue;
    const group = groupOfTool(name);
    if (group === null) continue;
    return formatScope([...grantedGroups(scopes), group]);
  }
  return null;
}
