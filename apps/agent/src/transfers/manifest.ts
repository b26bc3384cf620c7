import { createHash } from 'node:crypto';
import type { TransferEntry } from '@letkite/protocol';

/**
 * The digest a directory transfer is checked by: one line per entry in stream order (kind, permission bits, size
 * and SHA-256 of a file, or a symlink's target, then the relative path), hashed. Source and destination each
 * build it from what they sent and what they wrote, so a lost, reordered or altered entry changes it.
 */
export class ManifestDigest {
  private readonly hash = createHash('sha256');

  add(entry: Pick<TransferEntry, 'kind' | 'path' | 'mode' | 'target'>, file?: { bytes: number; sha256: string }): void {
    const what =
      entry.kind === 'file'
        ? `${file?.bytes ?? 0} ${file?.sha256 ?? ''}`
        : entry.kind === 'symlink'
          ? entry.target
          : '-';
    // JSON-quoting the path keeps a newline inside a name from forging another line.
    this.hash.update(`${entry.kind} ${entry.mode.toString(8)} ${what ?? ''} ${JSON.stringify(entry.path)}\n`);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
