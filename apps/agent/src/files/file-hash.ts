import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

const chunkBytes = 1024 * 1024;

/**
 * Reads an open file from its start to its end, hashing every byte. `onChunk` sees each chunk with its offset, so
 * a caller can copy out a window in the same pass. Returns the SHA-256 (hex) and the bytes read, which is the
 * size the hash belongs to even if the file changed since it was stat'ed.
 */
export async function hashOpenFile(
  handle: FileHandle,
  onChunk?: (chunk: Buffer, position: number) => void,
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(chunkBytes);
  let position = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, chunkBytes, position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    hash.update(chunk);
    onChunk?.(chunk, position);
    position += bytesRead;
  }
  return { sha256: hash.digest('hex'), size: position };
}
