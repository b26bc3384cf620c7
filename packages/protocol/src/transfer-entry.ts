import { z } from 'zod';

/**
 * One entry of a transfer's stream (the `entry` frame, messages.ts; the stream is described in ops-transfer.ts).
 * Apart from the transfer op's module because the frame schemas use it: an agent that never transfers a file
 * does not build the transfer schemas (issue #13).
 */

export const transferEntryKinds = ['file', 'dir', 'symlink'] as const;
export const TransferEntryKind = z.enum(transferEntryKinds);
export type TransferEntryKind = z.infer<typeof TransferEntryKind>;

/**
 * A relative path inside the transferred tree: "" for the root, else "/"-separated names with no ".", ".." or
 * empty part (the destination checks again before creating anything).
 */
export const RelativeTransferPath = z
  .string()
  .max(4096)
  .refine(
    (p) =>
      p === '' || p.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && !part.includes('\0')),
    'a transfer entry path must be relative, without ".", ".." or empty parts',
  );

export const TransferEntry = z.object({
  path: RelativeTransferPath,
  kind: TransferEntryKind,
  /** Permission bits (rwx only). */
  mode: z.number().int().min(0).max(0o777),
  /** Size when the source stat'ed it (a file that grows or shrinks meanwhile sends what it read). */
  size: z.number().int().min(0).optional(),
  /** A symlink's target, relative and staying inside the tree. */
  target: z.string().min(1).max(4096).optional(),
  /** Root entry only: bytes and files the whole transfer will carry. */
  total_bytes: z.number().int().min(0).optional(),
  total_files: z.number().int().min(0).optional(),
});
export type TransferEntry = z.infer<typeof TransferEntry>;
