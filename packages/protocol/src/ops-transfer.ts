import { z } from 'zod';
import { agentOp } from './agent-op';
import { AbsolutePath } from './ops-files';

/**
 * The agent's transfer operations: `transfer_send` on the source machine, `transfer_receive` on the destination.
 * The gateway relays one stream between them; neither agent ever talks to the other.
 *
 * The stream, in order, for one request id:
 *
 *   entry {entry}        one per file, directory or symlink, parents before children; the first is the root
 *                        (path "") and carries the totals
 *   <binary data>        a file's bytes, in order, right after its entry (data frames, data-frame.ts)
 *   entry_end            after a file's bytes: how many were read and their SHA-256
 *   …
 *   stream_end {sha256}  (gateway → destination only) the source finished; its manifest digest
 *
 * Flow control is by credit: a sender may have at most the credit it was granted outstanding. A data frame costs
 * its payload length, an `entry` or `entry_end` frame STREAM_RECORD_COST. The destination grants credit (a
 * `credit` frame, agent → gateway) once it has written what it received; the gateway passes that credit on to the
 * source (`credit`, gateway → agent). So at most one window of bytes is in flight end to end, whatever the
 * machines' speeds, and the gateway never holds more than that.
 */

/** Bytes of file data per data frame: big enough to amortise per-frame costs, well inside the 1 MiB frame. */
export const TRANSFER_CHUNK_BYTES = 512 * 1024;

/** The window the destination grants by default: enough frames in flight to keep both disks busy. */
export const TRANSFER_WINDOW_BYTES = 16 * TRANSFER_CHUNK_BYTES;

/** What an `entry` or `entry_end` record costs in credit, so a tree of empty files is flow-controlled too. */
export const STREAM_RECORD_COST = 1024;

/** Most entries one directory transfer carries; a bigger tree answers `too_large`. */
export const MAX_TRANSFER_ENTRIES = 100_000;

export {
  RelativeTransferPath,
  TransferEntry,
  TransferEntryKind,
  transferEntryKinds,
} from './transfer-entry';

export const skipReasons = ['symlink_outside_tree', 'not_a_regular_file', 'unreadable', 'not_writable'] as const;
/**
 * Why an entry of a directory was left out: a symlink pointing out of the source tree, a FIFO/socket/device, a
 * file the OS would not let the agent read, or a path the destination's file rules do not let it write.
 * Entries the file rules hide, and dot names unless asked, are left out silently, exactly as list_dir does.
 */
export const SkipReason = z.enum(skipReasons);
export const SkippedEntry = z.object({ path: z.string(), reason: SkipReason });
export type SkippedEntry = z.infer<typeof SkippedEntry>;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const TransferSendParams = z.object({
  path: AbsolutePath,
  include_hidden: z.boolean().optional(),
});
export type TransferSendParams = z.infer<typeof TransferSendParams>;

export const TransferReceiveParams = z.object({
  path: AbsolutePath,
  overwrite: z.boolean().optional(),
  /** Credit the destination grants (default TRANSFER_WINDOW_BYTES). */
  window_bytes: z
    .number()
    .int()
    .min(STREAM_RECORD_COST * 2)
    .max(64 * 1024 * 1024)
    .optional(),
});
export type TransferReceiveParams = z.infer<typeof TransferReceiveParams>;

/** Both ends answer with what they moved; the gateway checks the two agree. */
export const TransferSideResult = z.object({
  kind: z.enum(['file', 'dir']),
  bytes: z.number().int().min(0),
  files: z.number().int().min(0),
  /** A file's SHA-256, or a directory's manifest digest (every entry's path, kind, mode and content hash). */
  sha256: Sha256,
  skipped: z.array(SkippedEntry),
});
export type TransferSideResult = z.infer<typeof TransferSideResult>;

/** This module's agent operations (agent-ops.ts joins every module's into `agentOps`). */
export const transferOps = {
  transfer_send: agentOp(TransferSendParams, TransferSideResult, 'stream'),
  transfer_receive: agentOp(TransferReceiveParams, TransferSideResult, 'stream'),
} as const;
