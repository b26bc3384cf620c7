import { z } from 'zod';
import { Id, OkResponse, Timestamp } from './common';
import { endpoint } from './endpoint';

/** A policy as a grant holds it: an account policy's name, or (older grants) an inline policy object. */
export const GrantPolicy = z.union([z.string().min(1), z.record(z.string(), z.unknown())]);
export type GrantPolicy = z.infer<typeof GrantPolicy>;

/** What a token or connection may reach: `*` or a list. */
export const AllOrList = z.union([z.literal('*'), z.array(z.string().min(1))]);

export const TokenGrant = z.object({ policy: GrantPolicy, machines: AllOrList, scopes: AllOrList });
export type TokenGrant = z.infer<typeof TokenGrant>;

/** An API token; the secret itself is never listed (it is shown once, at creation). */
export const TokenView = z.object({
  id: Id,
  name: z.string(),
  user_id: Id,
  grant: TokenGrant,
  created_at: Timestamp,
  expires_at: Timestamp.nullable(),
  revoked_at: Timestamp.nullable(),
  last_used_at: Timestamp.nullable(),
});
export type TokenView = z.infer<typeof TokenView>;

export const TokenListResponse = z.object({ tokens: z.array(TokenView) });
export type TokenListResponse = z.infer<typeof TokenListResponse>;

export const CreateTokenRequest = z.object({
  name: z.string().trim().min(1).max(100),
  /** An account policy by name. */
  policy: z.string().min(1).max(100),
  machines: AllOrList,
  /** Tool names (`*`: every tool the policy allows). */
  scopes: AllOrList,
  /** `30d`, `12h` …; absent means until revoked. */
  expires: z.string().max(10).optional(),
});
export type CreateTokenRequest = z.infer<typeof CreateTokenRequest>;

/** The token is in this answer once and never again. */
export const CreateTokenResponse = z.object({ id: Id, token: z.string().min(20), expires_at: Timestamp.nullable() });
export type CreateTokenResponse = z.infer<typeof CreateTokenResponse>;

/** One tool group (DESIGN §7, the OAuth scopes). */
export const ToolGroupView = z.object({ name: z.string(), label: z.string(), tools: z.array(z.string()) });
export type ToolGroupView = z.infer<typeof ToolGroupView>;

/** The tools every grant has, and the groups to choose from, as the consent page offers them. */
export const ToolGroupsResponse = z.object({ base_tools: z.array(z.string()), groups: z.array(ToolGroupView) });
export type ToolGroupsResponse = z.infer<typeof ToolGroupsResponse>;

export const tokenEndpoints = {
  list: endpoint({ method: 'GET', path: '/api/tokens', response: TokenListResponse }),
  create: endpoint({ method: 'POST', path: '/api/tokens', request: CreateTokenRequest, response: CreateTokenResponse }),
  revoke: endpoint({ method: 'DELETE', path: '/api/tokens/:id', response: OkResponse }),
  toolGroups: endpoint({ method: 'GET', path: '/api/tool-groups', response: ToolGroupsResponse }),
};
