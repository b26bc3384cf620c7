import { z } from 'zod';
import { OkResponse, Timestamp } from './common';
import { endpoint } from './endpoint';

/**
 * The account policies' REST contract (issue #14, DESIGN §4): list, show with every revision, create, update,
 * delete, one revision, and the rule tester. The policy itself travels as its TOML source; `parsed` is the
 * validated form (defaults applied) the gateway resolves on every call.
 */

/** A policy name: the built-ins `full` and `read-only`, or an account policy. */
export const PolicyName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-", starting with a letter or digit');

/** One problem in a policy document: its 1-based line when known, the key path, what is wrong. */
export const PolicyIssue = z.object({
  path: z.string(),
  line: z.number().int().positive().optional(),
  message: z.string(),
});
export type PolicyIssue = z.infer<typeof PolicyIssue>;

/** One revision of a policy. Built-ins have version 0 and no author. */
export const PolicyRevisionView = z.object({
  name: PolicyName,
  version: z.number().int().nonnegative(),
  source: z.string(),
  parsed: z.record(z.string(), z.unknown()),
  author: z.string().nullable(),
  at: Timestamp.nullable(),
});
export type PolicyRevisionView = z.infer<typeof PolicyRevisionView>;

/** A policy as listed: its current revision, whether it is a read-only built-in, and the tool groups it can use. */
export const PolicyView = PolicyRevisionView.extend({
  builtin: z.boolean(),
  /** Tool groups (OAuth scopes) this policy can ever use: what the consent page and token form offer with it. */
  tool_groups: z.array(z.string()),
});
export type PolicyView = z.infer<typeof PolicyView>;

export const PolicyListResponse = z.object({ policies: z.array(PolicyView) });
export type PolicyListResponse = z.infer<typeof PolicyListResponse>;

/** A policy with every revision (newest first) and who uses it. */
export const PolicyShowResponse = z.object({
  policy: PolicyView,
  versions: z.array(PolicyRevisionView),
  used_by: z.array(
    z.object({
      kind: z.enum(['api_token', 'connection']),
      id: z.string(),
      label: z.string(),
      user_id: z.string(),
      user_name: z.string(),
    }),
  ),
});
export type PolicyShowResponse = z.infer<typeof PolicyShowResponse>;

/** Creates a policy from TOML; its name is the document's `name`. */
export const CreatePolicyRequest = z.object({
  source: z
    .string()
    .min(1)
    .max(256 * 1024),
});
export type CreatePolicyRequest = z.infer<typeof CreatePolicyRequest>;

/** Saves a new revision. `version`, when given, must be the current one (else `conflict`: someone saved first). */
export const UpdatePolicyRequest = z.object({
  source: z
    .string()
    .min(1)
    .max(256 * 1024),
  version: z.number().int().positive().optional(),
});
export type UpdatePolicyRequest = z.infer<typeof UpdatePolicyRequest>;

export const PolicySavedResponse = z.object({ policy: PolicyView });
export type PolicySavedResponse = z.infer<typeof PolicySavedResponse>;

/** Checks a TOML document without saving it: every problem with its line. */
export const ValidatePolicyRequest = z.object({ source: z.string().max(256 * 1024) });
export const ValidatePolicyResponse = z.object({
  valid: z.boolean(),
  issues: z.array(PolicyIssue),
  parsed: z.record(z.string(), z.unknown()).nullable(),
});
export type ValidatePolicyResponse = z.infer<typeof ValidatePolicyResponse>;

/**
 * The rule tester: judge commands exactly as the gateway and the agent do — the policy clamped to the machine's
 * reported ceiling, then every rule layer. Give a stored or built-in policy by `name`, or unsaved TOML as `source`.
 */
export const TestPolicyRequest = z
  .object({
    name: PolicyName.optional(),
    source: z
      .string()
      .max(256 * 1024)
      .optional(),
    /** A machine id or unique name; without one, no ceiling bounds the policy (the agent still has its own). */
    machine: z.string().min(1).max(200).optional(),
    commands: z
      .array(
        z
          .string()
          .min(1)
          .max(64 * 1024),
      )
      .min(1)
      .max(100),
  })
  .refine((r) => (r.name === undefined) !== (r.source === undefined), {
    message: 'give exactly one of "name" or "source"',
  });
export type TestPolicyRequest = z.input<typeof TestPolicyRequest>;

export const policyVerdicts = ['allow', 'confirm', 'approve', 'deny'] as const;

/** One reason of a verdict: which layer, which rule, what it said. */
export const VerdictReason = z.object({
  command: z.array(z.string()),
  layer: z.string(),
  rule: z.string().optional(),
  verdict: z.enum(policyVerdicts),
  message: z.string(),
  source: z.string().optional(),
});

export const TestPolicyResponse = z.object({
  policy: z.object({ name: z.string(), version: z.number().int().nonnegative().nullable() }),
  machine: z
    .object({
      id: z.string(),
      name: z.string(),
      /** `reported` (the machine's ceiling), `none` (not reported yet), `error` (it refuses everything). */
      ceiling: z.enum(['reported', 'none', 'error']),
      ceiling_error: z.string().nullable(),
    })
    .nullable(),
  results: z.array(
    z.object({
      command: z.string(),
      verdict: z.enum(policyVerdicts),
      /** Which layer decided a refusal. */
      layer: z.enum(['ceiling', 'policy']),
      /** The policy lists `exec` under `approval.tools`: a human approves even an `allow`. */
      approval_tool: z.boolean(),
      reasons: z.array(VerdictReason),
    }),
  ),
});
export type TestPolicyResponse = z.infer<typeof TestPolicyResponse>;

export const policyEndpoints = {
  list: endpoint({ method: 'GET', path: '/api/policies', response: PolicyListResponse }),
  show: endpoint({ method: 'GET', path: '/api/policies/:name', response: PolicyShowResponse }),
  version: endpoint({ method: 'GET', path: '/api/policies/:name/versions/:version', response: PolicyRevisionView }),
  create: endpoint({
    method: 'POST',
    path: '/api/policies',
    request: CreatePolicyRequest,
    response: PolicySavedResponse,
  }),
  update: endpoint({
    method: 'PUT',
    path: '/api/policies/:name',
    request: UpdatePolicyRequest,
    response: PolicySavedResponse,
  }),
  remove: endpoint({ method: 'DELETE', path: '/api/policies/:name', response: OkResponse }),
  validate: endpoint({
    method: 'POST',
    path: '/api/policies/validate',
    request: ValidatePolicyRequest,
    response: ValidatePolicyResponse,
  }),
  test: endpoint({
    method: 'POST',
    path: '/api/policies/test',
    request: TestPolicyRequest,
    response: TestPolicyResponse,
  }),
};
