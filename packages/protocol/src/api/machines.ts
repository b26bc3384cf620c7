import { z } from 'zod';
import { Id } from './common';
import { endpoint } from './endpoint';

/**
 * A machine's name: what people and AIs type to reach it (`exec { machine: "web-1" }`), unique in its account.
 * Letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 63 characters.
 */
export const MachineName = z
  .string()
  .trim()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
    'letters, digits, ".", "_" and "-", starting with a letter or digit, at most 63',
  );
export type MachineName = z.infer<typeof MachineName>;

/** PATCH /api/machines/:id — rename a machine (permission `machines.manage`; owners and admins hold it). */
export const RenameMachineRequest = z.object({ name: MachineName }).strict();
export type RenameMachineRequest = z.infer<typeof RenameMachineRequest>;

/** The machine as renamed; `previous_name` is what it was called before. */
export const RenameMachineResponse = z.object({ id: Id, name: z.string(), previous_name: z.string() });
export type RenameMachineResponse = z.infer<typeof RenameMachineResponse>;

export const machineEndpoints = {
  rename: endpoint({
    method: 'PATCH',
    path: '/api/machines/:id',
    request: RenameMachineRequest,
    response: RenameMachineResponse,
  }),
};
