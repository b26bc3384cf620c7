import { z } from 'zod';
import { Timestamp } from './common';
import { endpoint } from './endpoint';

/**
 * The account switches (issue #14): an owner turns transports and tool groups off for the whole account, checked
 * on every request. `legacy_sse` governs the old HTTP+SSE transport (refused while it is off, once it exists).
 */
export const AccountSettingsView = z.object({
  mcp_http: z.boolean(),
  stdio_bridge: z.boolean(),
  legacy_sse: z.boolean(),
  /** Tool groups (OAuth scope names) no connection of the account may use: gone from tools/list, refused. */
  disabled_tool_groups: z.array(z.string()),
  updated_at: Timestamp.nullable(),
  updated_by: z.string().nullable(),
});
export type AccountSettingsView = z.infer<typeof AccountSettingsView>;

/** Changes some switches; the ones left out keep their value. */
export const UpdateAccountSettingsRequest = z.strictObject({
  mcp_http: z.boolean().optional(),
  stdio_bridge: z.boolean().optional(),
  legacy_sse: z.boolean().optional(),
  disabled_tool_groups: z.array(z.string().min(1).max(32)).max(32).optional(),
});
export type UpdateAccountSettingsRequest = z.infer<typeof UpdateAccountSettingsRequest>;

export const AccountSettingsResponse = z.object({ settings: AccountSettingsView });
export type AccountSettingsResponse = z.infer<typeof AccountSettingsResponse>;

export const accountSettingsEndpoints = {
  get: endpoint({ method: 'GET', path: '/api/account/settings', response: AccountSettingsResponse }),
  update: endpoint({
    method: 'PUT',
    path: '/api/account/settings',
    request: UpdateAccountSettingsRequest,
    response: AccountSettingsResponse,
  }),
};
