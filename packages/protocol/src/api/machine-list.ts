import { z } from 'zod';
import { Id, NamedRef, Timestamp } from './common';
import { endpoint } from './endpoint';

/**
 * The effective ceiling a machine's agent reports (DESIGN §5), as the agent sent it. The gateway stores it
 * verbatim and the schema of `ceiling.toml` lives in `@letkite/ceiling`, which is not browser-safe; so this is an
 * object of known-by-name keys that the dashboard renders row by row, and anything it does not know it shows as
 * text. Everything in it came from the machine and is untrusted.
 */
export const ReportedCeiling = z.record(z.string(), z.unknown());
export type ReportedCeiling = z.infer<typeof ReportedCeiling>;

/** One machine the signed-in person can reach. Every field but `id`, `online` and `claimed_by` is agent-reported. */
export const MachineView = z.object({
  id: Id,
  name: z.string(),
  online: z.boolean(),
  hostname: z.string().nullable(),
  os: z.string().nullable(),
  os_release: z.string().nullable(),
  arch: z.string().nullable(),
  agent_version: z.string().nullable(),
  labels: z.array(z.string()),
  ceiling: ReportedCeiling.nullable(),
  /** `file`, `defaults` or `error` (the agent fails closed). */
  ceiling_source: z.string().nullable(),
  ceiling_error: z.string().nullable(),
  last_seen_at: Timestamp.nullable(),
  /** Groups that claim this machine; empty means everyone in the account reaches it. */
  claimed_by: z.array(NamedRef),
});
export type MachineView = z.infer<typeof MachineView>;

export const MachineListResponse = z.object({ machines: z.array(MachineView) });
export type MachineListResponse = z.infer<typeof MachineListResponse>;

/** A one-time join token and the command that enrolls a machine with it (the token goes on stdin). */
export const EnrollmentResponse = z.object({ token: z.string().min(10), expires_at: Timestamp, command: z.string() });
export type EnrollmentResponse = z.infer<typeof EnrollmentResponse>;

export const machineListEndpoints = {
  list: endpoint({ method: 'GET', path: '/api/machines', response: MachineListResponse }),
  enroll: endpoint({ method: 'POST', path: '/api/machines/enroll', response: EnrollmentResponse }),
};
