import { z } from 'zod';
import { ErrorPayload } from '../errors';

/** An instant as the gateway writes it: `Date.prototype.toISOString()` (UTC, `Z`). */
export const Timestamp = z.iso.datetime({ offset: true });
export type Timestamp = z.infer<typeof Timestamp>;

/** An id the gateway made (`usr_…`, `mch_…`, …) or a credential id; opaque to clients. */
export const Id = z.string().min(1).max(1024);

/** A change that answers nothing else. */
export const OkResponse = z.object({ ok: z.literal(true) });
export type OkResponse = z.infer<typeof OkResponse>;

/** Every refused REST call: `{ error: { code, message, details } }` with the HTTP status of the code. */
export const ApiErrorBody = z.object({ error: ErrorPayload });
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;

/** Built-in roles in an account (DESIGN §3). */
export const roles = ['owner', 'admin', 'member'] as const;
export const Role = z.enum(roles);
export type Role = z.infer<typeof Role>;

/**
 * The single permissions a role can hold (DESIGN §3). The gateway's `identity/permissions.ts` must list the same
 * names; a gateway test compares the two.
 */
export const permissionNames = [
  'machines.view',
  'machines.enroll',
  'machines.manage',
  'clients.connect',
  'approvals.decide',
  'audit.read',
  'policies.manage',
  'members.manage',
] as const;
export const Permission = z.enum(permissionNames);
export type Permission = z.infer<typeof Permission>;

/** Who may approve a request (DESIGN §6); the same names as `@letkite/policy`'s `approverKinds`. */
export const approverKinds = ['connector', 'any_admin', 'four_eyes'] as const;
export const ApproverKind = z.enum(approverKinds);
export type ApproverKind = z.infer<typeof ApproverKind>;

/** A `{ id, name }` pair that names something for display. */
export const NamedRef = z.object({ id: Id, name: z.string() });
export type NamedRef = z.infer<typeof NamedRef>;
