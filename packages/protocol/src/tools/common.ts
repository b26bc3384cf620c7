import { z } from 'zod';
import type { ErrorCode } from '../errors';

/** A machine named by its id or by a unique name. */
export const MachineRef = z.string().min(1).max(128).describe('Machine id or unique name (see machines_list).');

/** `confirm` of the tools that run a command line (exec, job_start, shell_run): the answer to `confirmation_required`. */
export const ConfirmCommand = z
  .boolean()
  .optional()
  .describe('Set after showing the person the exact command, when a previous call answered confirmation_required.');

/** The answer to a call that waits for a human (DESIGN §6). */
export const PendingApproval = z.object({
  status: z.literal('pending_approval'),
  approval_id: z.string().describe('Pass to approval_wait; the request is bound to exactly this call.'),
  approvers: z.array(z.string()).describe('Who was asked (names or e-mail addresses).'),
  expires_at: z.string().describe('ISO-8601 time after which nobody can approve it any more.'),
  message: z.string().describe('What to do now: tell the person, call approval_wait, then repeat the same call.'),
  /** The last earlier request for the identical call, when it can no longer be used (so a new one was made). */
  previous: z
    .object({ approval_id: z.string(), status: z.enum(['used', 'expired']) })
    .optional()
    .describe('An earlier request for the identical call that was already used or expired.'),
});
export type PendingApproval = z.infer<typeof PendingApproval>;

/** Codes any call that reaches a machine can answer with. */
export const reachingMachineErrors = [
  'machine_not_found',
  'ambiguous_machine',
  'machine_offline',
  'blocked_by_ceiling',
  'timeout',
] as const satisfies readonly ErrorCode[];

/** Codes of a call that command rules judge and that can need a human (DESIGN §6). */
export const gatedCallErrors = [
  'blocked_by_policy',
  'confirmation_required',
  'approval_denied',
  'approval_expired',
  'too_many_pending_approvals',
] as const satisfies readonly ErrorCode[];

/**
 * "Exactly one of `a` or `b`" for a tool input (REVIEW §4.3-1): the refinement validates it (one issue naming both
 * keys), and the metadata publishes the same rule in the JSON Schema, so an AI reading tools/list sees what the call
 * is checked against. The rule is published as one top-level `not` ("no pair has both or neither"), not as
 * `oneOf`: the Anthropic API refuses every request whose tools have `oneOf`, `anyOf` or `allOf` at the top of an
 * input schema, so a top-level `oneOf` would make the whole server unusable from Claude. Several pairs go in one
 * call (zod keeps one metadata object per schema).
 */
export function exactlyOneOf<T extends z.ZodObject>(schema: T, ...pairs: readonly (readonly [string, string])[]): T {
  const refined = schema.superRefine((value, ctx) => {
    const given = value as Record<string, unknown>;
    for (const [a, b] of pairs) {
      if ((given[a] === undefined) === (given[b] === undefined)) {
        ctx.addIssue({ code: 'custom', message: `give exactly one of "${a}" or "${b}"`, path: [], params: { a, b } });
      }
    }
  });
  const broken = pairs.flatMap(([a, b]) => [
    { required: [a, b] },
    { not: { anyOf: [{ required: [a] }, { required: [b] }] } },
  ]);
  return pairs.length === 0 ? refined : refined.meta({ not: { anyOf: broken } });
}
