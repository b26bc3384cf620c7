import { z } from 'zod';
import { Id, OkResponse, Permission } from './common';
import { endpoint } from './endpoint';

export const CustomRoleView = z.object({ id: Id, name: z.string(), permissions: z.array(Permission) });
export type CustomRoleView = z.infer<typeof CustomRoleView>;

/** The account's custom roles, and every permission one can hold. */
export const RoleListResponse = z.object({ permissions: z.array(Permission), roles: z.array(CustomRoleView) });
export type RoleListResponse = z.infer<typeof RoleListResponse>;

export const SaveCustomRoleRequest = z.object({
  name: z.string().trim().min(1).max(60),
  permissions: z.array(Permission),
});
export type SaveCustomRoleRequest = z.infer<typeof SaveCustomRoleRequest>;

/** A group: its members, and the machines it claims (then only they, owners and admins reach them). */
export const GroupView = z.object({
  id: Id,
  name: z.string(),
  member_ids: z.array(Id),
  machine_ids: z.array(Id),
});
export type GroupView = z.infer<typeof GroupView>;

export const GroupListResponse = z.object({ groups: z.array(GroupView) });
export type GroupListResponse = z.infer<typeof GroupListResponse>;

export const SaveGroupRequest = z.object({
  name: z.string().trim().min(1).max(60),
  member_ids: z.array(Id),
  machine_ids: z.array(Id),
});
export type SaveGroupRequest = z.infer<typeof SaveGroupRequest>;

export const roleEndpoints = {
  list: endpoint({ method: 'GET', path: '/api/roles', response: RoleListResponse }),
  create: endpoint({ method: 'POST', path: '/api/roles', request: SaveCustomRoleRequest, response: CustomRoleView }),
  update: endpoint({ method: 'PUT', path: '/api/roles/:id', request: SaveCustomRoleRequest, response: CustomRoleView }),
  remove: endpoint({ method: 'DELETE', path: '/api/roles/:id', response: OkResponse }),
};

export const groupEndpoints = {
  list: endpoint({ method: 'GET', path: '/api/groups', response: GroupListResponse }),
  create: endpoint({ method: 'POST', path: '/api/groups', request: SaveGroupRequest, response: GroupView }),
  update: endpoint({ method: 'PUT', path: '/api/groups/:id', request: SaveGroupRequest, response: GroupView }),
  remove: endpoint({ method: 'DELETE', path: '/api/groups/:id', response: OkResponse }),
};
