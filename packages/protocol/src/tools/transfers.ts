import { z } from 'zod';
import { defineTool } from '../define-tool';
import type { ErrorCode } from '../errors';
import { AbsolutePath } from '../ops-files';
import { SkippedEntry } from '../ops-transfer';
import { MachineRef } from './common';

/**
 * The transfer tools (DESIGN §7): a file or directory from one machine to another, streamed through the gateway
 * with flow control, SHA-256 checked end to end and renamed into place atomically at the destination.
 */

const Endpoint = z.strictObject({ machine: MachineRef, path: AbsolutePath });

export const copyBetweenHostsInput = z.strictObject({
  source: Endpoint.describe('What to copy: a file or a directory the file rules let you read.'),
  destination: Endpoint.describe(
    'Where the copy goes: the new path itself (its parent directory must exist), writable under the file rules.',
  ),
  overwrite: z
    .boolean()
    .optional()
    .describe(
      'Replace an existing destination file (default false: an existing destination answers conflict). A directory is never replaced.',
    ),
  include_hidden: z.boolean().optional().describe('Copy names starting with "." inside a directory (default false).'),
  confirm: z
    .boolean()
    .optional()
    .describe('Set after showing the person exactly what will be copied where, when asked to confirm.'),
});

const Sha256 = z.string().describe("A file's SHA-256, or for a directory the digest of its manifest.");

export const copyBetweenHostsOutput = z.object({
  bytes: z.number().int().describe('File bytes copied.'),
  files: z.number().int().describe('Regular files copied.'),
  sha256: Sha256,
  duration_ms: z.number().int(),
  skipped: z
    .array(SkippedEntry)
    .describe('Entries of a directory left out, with why (symlinks leaving the tree, special files …).'),
});

/** Codes a transfer can answer with besides invalid_params and internal. */
const transferErrors = [
  'machine_not_found',
  'ambiguous_machine',
  'machine_offline',
  'blocked_by_ceiling',
  'blocked_by_policy',
  'not_found',
  'conflict',
  'forbidden',
  'too_large',
  'unsupported',
  'protocol_error',
  'timeout',
  'approval_denied',
  'approval_expired',
  'too_many_pending_approvals',
] as const satisfies readonly ErrorCode[];

export const copyBetweenHosts = defineTool({
  name: 'copy_between_hosts',
  title: 'Copy between machines',
  description:
    'Copies a file or a directory from one machine to another (or within one machine) through the gateway, and waits for it. Streamed with flow control, SHA-256 checked end to end, written under a temporary name and renamed into place, so the destination never holds a partial copy. Directories keep their layout, permission bits and symlinks that stay inside the tree. For large copies use transfer_start.',
  input: copyBetweenHostsInput,
  output: copyBetweenHostsOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  // A policy can list it in approval.tools: then the first call answers pending_approval (DESIGN §6).
  gated: true,
  // conflict: the destination exists (without overwrite) or is a directory; protocol_error: the data arrived
  // different from what the source read (checksum mismatch); machine_offline: an agent left mid-way.
  errors: transferErrors,
});

export const transferStart = defineTool({
  name: 'transfer_start',
  title: 'Start a copy between machines',
  description:
    'Starts copy_between_hosts in the background and answers at once with a transfer_id for transfer_status. The gateway that started a transfer relays it: if that gateway stops, the transfer fails (its partial copy is removed); its id and outcome stay known to every gateway for an hour after it ends.',
  input: copyBetweenHostsInput,
  output: z.object({ transfer_id: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  gated: true,
  errors: transferErrors,
});

export const transferStates = ['running', 'done', 'failed', 'cancelled'] as const;
export const TransferState = z.enum(transferStates);

export const transferStatus = defineTool({
  name: 'transfer_status',
  title: 'Progress of a copy',
  description:
    'Progress of a transfer started with transfer_start: bytes and files done out of the total, the current rate, and the result or error once it ends. Any gateway of the cluster answers, for an hour after the transfer ended; an unknown id, or one of another account, answers not_found.',
  input: z.strictObject({ transfer_id: z.string().min(1).max(64) }),
  output: z.object({
    transfer_id: z.string(),
    state: TransferState,
    bytes_done: z.number().int(),
    bytes_total: z.number().int().nullable().describe('Known once the source has looked at what it sends.'),
    rate_bytes_per_s: z.number().int(),
    files_done: z.number().int(),
    files_total: z.number().int().nullable(),
    started_at: z.string(),
    result: copyBetweenHostsOutput.optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: false },
  errors: ['not_found'],
});

/** The transfer tools, in the order DESIGN §7 lists them. */
export const transferTools = [copyBetweenHosts, transferStart, transferStatus] as const;
