import { z } from 'zod';
import { defineTool } from '../define-tool';
import { ErrorPayload } from '../errors';
import { exactlyOneOf, MachineRef } from './common';
import { execFields, execOutput } from './exec';

const { machine: _machine, stdin: _stdin, ...perMachine } = execFields.shape;

export const execManyInput = exactlyOneOf(
  z.strictObject({
    machines: z
      .array(MachineRef)
      .min(1)
      .max(200)
      .optional()
      .describe('Machine ids or unique names. Give either machines or label.'),
    label: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('Every machine you can reach that carries this label. Give either machines or label.'),
    ...perMachine,
    max_parallel: z
      .number()
      .int()
      .min(1)
      .max(32)
      .optional()
      .describe('How many machines run at the same time (default 8).'),
  }),
  ['machines', 'label'],
  ['command', 'argv'],
);

export const execManyOutput = z.object({
  results: z.array(
    z.object({
      /** The machine's id (or the reference as given, when it could not be resolved). */
      machine: z.string(),
      name: z.string().nullable(),
      ok: z.boolean(),
      result: execOutput.optional(),
      error: ErrorPayload.optional(),
    }),
  ),
  /** Machines whose command ran and exited 0. */
  succeeded: z.number().int(),
  /** Machines that answered with an error or a non-zero exit. */
  failed: z.number().int(),
});

export const execMany = defineTool({
  name: 'exec_many',
  title: 'Run a command on several machines',
  description:
    'Runs one command on several machines (by ids/names, or by label) in parallel and returns one result per machine, in the order given. An offline or refusing machine is an error for that machine only, not for the call. Sends a progress notification as each machine finishes. Output per machine is masked and capped (tighter with many machines). When the call needs a human approval, one approval covers the whole call on exactly this set of machines.',
  input: execManyInput,
  output: execManyOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  // Per-machine refusals are inside results; the call itself fails for bad input, when no machine matches, or
  // at the approval gate (one approval for the whole call, bound to the set of machines).
  errors: [
    'machine_not_found',
    'blocked_by_policy',
    'approval_denied',
    'approval_expired',
    'too_many_pending_approvals',
  ],
  gated: true,
});
