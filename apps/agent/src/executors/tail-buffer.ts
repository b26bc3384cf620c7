/** Keeps the newest `limit` bytes written to it; remembers whether anything was dropped. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  write(chunk: Buffer): void {
    if (chunk.length >= this.limit) {
      this.chunks = [chunk.subarray(chunk.length - this.limit)];
      this.truncated ||= chunk.length > this.limit || this.size > 0;
      this.size = this.limit;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit) {
      const head = this.chunks[0];
      if (!head) break;
      const excess = this.size - this.limit;
      if (head.length <= excess) {
        this.chunks.shift();
        this.size -= head.length;
      } else {
        this.chunks[0] = head.subarray(excess);
        this.size -= excess;
      }
      this.truncated = true;
    }
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}

/**
 * Decodes UTF-8 that may start in the middle of a character (a tail cut): leading continuation bytes are dropped
 * rather than shown as replacement characters.
 */
export function decodeTail(buf: Buffer, wasCut: boolean): string {
  let start = 0;
  if (wasCut) {
    while (start < buf.length && start < 4 && ((buf[start] ?? 0) & 0xc0) === 0x80) start++;
  }
  return buf.subarray(start).toString('utf8');
}
