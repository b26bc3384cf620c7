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

export const machinesList = defineTool({
  name: 'machines_list',
  title: 'List machines',
  description: 'Lists the machines this connection can reach, with online state, OS and effective ceiling.',
  input: z.strictObject({}),
  output: z.object({ machines: z.array(MachineSummary) }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  errors: [],
});
