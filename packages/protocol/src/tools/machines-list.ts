import { z } from 'zod';
import { defineTool } from '../define-tool';

export const MachineSummary = z.object({
  id: z.string(),
  name: z.string(),
  online: z.boolean(),
  os: z.string().nullable(),
  arch: z.string().nullable(),
  hostname: z.string().nullable(),
  labels: z.array(z.string()),
  /** The machine's effective ceiling as its agent last reported it (null until it has). */
  ceiling: z.unknown().nullable(),
  last_seen_at: z.string().nullable(),
});
export type MachineSummary = z.infer<typeof MachineSummary>;

/**
 * machines_list answers one page, ordered by name (then id). A fleet of thousands would otherwise be one reply of
 * megabytes (every ceiling included) on every call.
 */
export const MACHINES_LIST_DEFAULT_LIMIT = 100;
export const MACHINES_LIST_MAX_LIMIT = 1000;

export const machinesList = defineTool({
  name: 'machines_list',
  title: 'List machines',
  description:
    'Lists the machines this connection can reach, with online state, OS and effective ceiling, one page at a time (by name; pass next_cursor as cursor for the next page).',
  input: z.strictObject({
    cursor: z
      .string()
      .max(1024)
      .optional()
      .describe('next_cursor of the previous page, to read the page after it; omit for the first page'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MACHINES_LIST_MAX_LIMIT)
      .optional()
      .describe(`machines per page (default ${MACHINES_LIST_DEFAULT_LIMIT}, at most ${MACHINES_LIST_MAX_LIMIT})`),
  }),
  output: z.object({
    machines: z.array(MachineSummary),
    /** Set when more machines follow: pass it as `cursor` for the next page. */
    next_cursor: z.string().nullable(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  errors: [],
});
