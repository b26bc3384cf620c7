import type { SkippedEntry } from '@letkite/protocol';

/** Most skipped entries one side of a transfer lists, and most characters of their paths in all. */
export const MAX_SKIPPED_LISTED = 1000;
const MAX_SKIPPED_PATH_CHARS = 256 * 1024;

/**
 * The entries a transfer left out, as its answer lists them: the first MAX_SKIPPED_LISTED (and at most 256k
 * characters of paths), so the answer always fits in one frame, however many a tree holds (a rogue stream can
 * make every entry a skipped one). Later ones are still left out, only not listed.
 */
export class SkippedList {
  readonly entries: SkippedEntry[] = [];
  private chars = 0;

  add(entry: SkippedEntry): void {
    if (this.entries.length >= MAX_SKIPPED_LISTED || this.chars + entry.path.length > MAX_SKIPPED_PATH_CHARS) return;
    this.chars += entry.path.length;
    this.entries.push(entry);
  }
}
