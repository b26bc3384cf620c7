import { LetKiteError } from '@letkite/protocol';
import { type AccountSettingsView, UpdateAccountSettingsRequest } from '@letkite/protocol/api';
import { z } from 'zod';
import { isToolGroup, toolGroupNames } from '../oauth/scopes';
import { defineService } from '../services/define-service';
import { auditEvent, type ServiceContext } from '../services/service-context';
import type { AccountSettings } from '../store/policy-store';
import { accountOf } from './list-policies';
import type { PolicyDeps } from './policy-views';

/** The switches as the API shows them. */
export function settingsView(s: AccountSettings): AccountSettingsView {
  return {
    mcp_http: s.mcpHttp,
    stdio_bridge: s.stdioBridge,
    legacy_sse: s.legacySse,
    disabled_tool_groups: s.disabledToolGroups,
    updated_at: s.updatedAt,
    updated_by: s.updatedBy,
  };
}

/** Owners only: the switches govern every connection of the account, admins' included. */
function requireOwner(ctx: ServiceContext<unknown>): void {
  const a = ctx.actor;
  if (a.kind === 'cli') return;
  if (a.kind === 'user' && a.user.role === 'owner') return;
  throw new LetKiteError('forbidden', "only the account's owners change or read its switches", { role: 'owner' });
}

/** The account switches (owners only). */
export const getAccountSettings = defineService({
  name: 'account_settings.get',
  input: z.object({}),
  async run(ctx: ServiceContext<PolicyDeps>) {
    requireOwner(ctx);
    return { settings: settingsView(await ctx.deps.policies.settings(accountOf(ctx))) };
  },
});

/**
 * Changes some switches (owners only); the ones left out keep their value. They apply to the next request of
 * every session: a transport switched off stops an open MCP session at its next call, no restart.
 */
export const updateAccountSettings = defineService({
  name: 'account_settings.update',
  input: UpdateAccountSettingsRequest,
  async run(ctx: ServiceContext<PolicyDeps>, input) {
    requireOwner(ctx);
    const unknown = (input.disabled_tool_groups ?? []).filter((g) => !isToolGroup(g));
    if (unknown.length > 0) {
      throw new LetKiteError('invalid_params', `no tool group ${unknown.map((g) => `"${g}"`).join(', ')}`, {
        issues: [{ path: 'disabled_tool_groups', message: `known groups: ${toolGroupNames.join(', ')}` }],
      });
    }
    const account = accountOf(ctx);
    const current = await ctx.deps.policies.settings(account);
    const next = {
      mcpHttp: input.mcp_http ?? current.mcpHttp,
      stdioBridge: input.stdio_bridge ?? current.stdioBridge,
      legacySse: input.legacy_sse ?? current.legacySse,
      disabledToolGroups: input.disabled_tool_groups ?? current.disabledToolGroups,
    };
    const saved = await ctx.deps.policies.saveSettings(
      account,
      next,
      auditEvent(ctx, 'account_settings.update', account, {
        mcp_http: next.mcpHttp,
        stdio_bridge: next.stdioBridge,
        legacy_sse: next.legacySse,
        disabled_tool_groups: next.disabledToolGroups,
      }),
    );
    return { settings: settingsView(saved) };
  },
});
