import { z } from 'zod';
import { Id, NamedRef, OkResponse, Role, Timestamp } from './common';
import { endpoint } from './endpoint';

export const MemberView = z.object({
  id: Id,
  name: z.string(),
  email: z.string().nullable(),
  role: Role,
  custom_role: NamedRef.nullable(),
  joined_at: Timestamp,
  has_passkey: z.boolean(),
  has_password: z.boolean(),
});
export type MemberView = z.infer<typeof MemberView>;

/** An invitation not yet accepted, withdrawn or expired. */
export const InvitationView = z.object({
  id: Id,
  email: z.string(),
  role: Role,
  custom_role_id: Id.nullable(),
  expires_at: Timestamp,
});
export type InvitationView = z.infer<typeof InvitationView>;

export const MemberListResponse = z.object({ members: z.array(MemberView), invitations: z.array(InvitationView) });
export type MemberListResponse = z.infer<typeof MemberListResponse>;

/** A role choice: a built-in role, or `member` with a custom role. */
export const RoleChoice = z.object({ role: Role, custom_role_id: Id.nullish() });
export type RoleChoice = z.infer<typeof RoleChoice>;

export const InviteMemberRequest = RoleChoice.extend({ email: z.email().max(254) });
export type InviteMemberRequest = z.infer<typeof InviteMemberRequest>;

/** `link` is there only when no e-mail went out: the inviter passes it on. */
export const InviteMemberResponse = z.object({
  id: Id,
  email: z.string(),
  expires_at: Timestamp,
  sent: z.boolean(),
  link: z.string().optional(),
});
export type InviteMemberResponse = z.infer<typeof InviteMemberResponse>;

export const memberEndpoints = {
  list: endpoint({ method: 'GET', path: '/api/members', response: MemberListResponse }),
  invite: endpoint({
    method: 'POST',
    path: '/api/invitations',
    request: InviteMemberRequest,
    response: InviteMemberResponse,
  }),
  withdrawInvitation: endpoint({ method: 'DELETE', path: '/api/invitations/:id', response: OkResponse }),
  changeRole: endpoint({ method: 'PATCH', path: '/api/members/:user_id', request: RoleChoice, response: OkResponse }),
  remove: endpoint({ method: 'DELETE', path: '/api/members/:user_id', response: OkResponse }),
};
