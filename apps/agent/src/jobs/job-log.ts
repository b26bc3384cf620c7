import { closeSync, openSync, readdirSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** A job keeps at most this much output on disk (newest kept). */
export const JOB_LOG_MAX_BYTES = 16 * 1024 * 1024;

const FILE = /^output\.(\d+)\.log$/;

export interface LogPage {
  /** Where the page really starts (absolute byte offset). */
  offset: number;
  nextOffset: number;
  data: Buffer;
  skippedBytes: number;
}

/**
 * A job's output as one bounded file addressed by absolute byte offsets (offset 0 is the job's first byte ever).
 * When the file reaches `maxBytes`, the oldest half is dropped: the newest half is copied to a new file named
 * after its absolute start (`output.<start>.log`), which is renamed into place before the old one is removed, so
 * a crash at any point leaves one complete file whose name says where it starts. Compaction copies each byte at
 * most once per `maxBytes / 2` written, so appending stays linear.
 */
export class JobLog {
  /** -1 once closed: output arriving after the agent's shutdown (a job's last bytes) has nowhere to go. */
  private fd: number;
  private base: number;
  private size: number;

  private constructor(
    private readonly dir: string,
    base: number,
    private readonly maxBytes: number,
  ) {
    this.base = base;
    const path = this.pathFor(base);
    this.fd = openSync(path, 'a+', 0o600);
    this.size = statSync(path).size;
  }

  /** Opens the job's log in `dir`, creating it, or picking up what a previous agent process left. */
  static open(dir: string, maxBytes = JOB_LOG_MAX_BYTES): JobLog {
    const bases = readdirSync(dir)
      .map((name) => FILE.exec(name)?.[1])
      .filter((b): b is string => b !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const newest = bases.at(-1) ?? 0;
    // Older files are leftovers of a compaction interrupted after its rename.
    for (const b of bases.slice(0, -1)) unlinkSync(join(dir, `output.${b}.log`));
    return new JobLog(dir, newest, maxBytes);
  }

  /** Absolute offset of the first byte still kept. */
  get start(): number {
    return this.base;
  }

  /** Absolute offset just past the last byte written. */
  get end(): number {
    return this.base + this.size;
  }

  append(chunk: Buffer): void {
    if (chunk.length === 0 || this.fd < 0) return;
    if (chunk.length >= this.maxBytes) {
      // Only the newest maxBytes of this chunk can survive anyway.
      const dropped = this.size + (chunk.length - this.maxBytes);
      this.replaceWith(this.base + dropped, chunk.subarray(chunk.length - this.maxBytes));
      return;
    }
    if (this.size + chunk.length > this.maxBytes)
      this.compact(this.size + chunk.length - Math.floor(this.maxBytes / 2));
    writeSync(this.fd, chunk);
    this.size += chunk.length;
  }

  /**
   * Reads up to `size` bytes from absolute `offset`, ending after at most `maxLines` line breaks, at the last line
   * break when the page does not reach the end, and never inside a UTF-8 character; starting on a character.
   * While more output may come (`final` false), a character cut at the very end is left for the next page.
   */
  read(offset: number, size: number, maxLines: number, final = true): LogPage {
    if (this.fd < 0) return { offset: this.end, nextOffset: this.end, data: Buffer.alloc(0), skippedBytes: 0 };
    const skippedBytes = Math.max(0, this.base - offset);
    let from = Math.min(Math.max(offset, this.base), this.end);
    const want = Math.min(size, this.end - from);
    const buf = Buffer.alloc(Math.min(want + 3, this.end - from));
    const got = buf.length > 0 ? readSync(this.fd, buf, 0, buf.length, from - this.base) : 0;
    let bytes = buf.subarray(0, got);
    // Start on a character: skip continuation bytes (a page boundary cut a character).
    let lead = 0;
    while (lead < 3 && lead < bytes.length && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead++;
    bytes = bytes.subarray(lead);
    from += lead;
    let len = Math.min(want - lead, bytes.length);
    if (len < 0) len = 0;
    let page = bytes.subarray(0, len);
    let lines = 0;
    for (let i = 0; i < page.length; i++) {
      if (page[i] === 0x0a && ++lines === maxLines) {
        page = page.subarray(0, i + 1);
        break;
      }
    }
    const reachesEnd = from + page.length >= this.end;
    if (!reachesEnd && lines < maxLines) {
      const nl = page.lastIndexOf(0x0a);
      if (nl >= 0) page = page.subarray(0, nl + 1);
    }
    page = page.subarray(0, completeUtf8Length(page, final && from + page.length >= this.end));
    return { offset: from, nextOffset: from + page.length, data: Buffer.from(page), skippedBytes };
  }

  /**
   * Closes the file; again is a no-op. Shutdown can reach a log twice (a job's own exit racing the agent's stop,
   * SIGINT from the terminal and SIGTERM from `letkite start`), and a second closeSync would be EBADF.
   */
  close(): void {
    if (this.fd < 0) return;
    const fd = this.fd;
    this.fd = -1;
    closeSync(fd);
  }

  private pathFor(base: number): string {
    return join(this.dir, `output.${base}.log`);
  }

  /** Drops the oldest `drop` bytes. */
  private compact(drop: number): void {
    const keep = Buffer.alloc(this.size - drop);
    readSync(this.fd, keep, 0, keep.length, drop);
    this.replaceWith(this.base + drop, keep);
  }

  private replaceWith(base: number, content: Buffer): void {
    const oldPath = this.pathFor(this.base);
    const tmp = join(this.dir, 'output.tmp');
    const fd = openSync(tmp, 'w', 0o600);
    writeSync(fd, content);
    closeSync(fd);
    renameSync(tmp, this.pathFor(base));
    closeSync(this.fd);
    if (base !== this.base) unlinkSync(oldPath);
    this.base = base;
    this.fd = openSync(this.pathFor(base), 'a+', 0o600);
    this.size = content.length;
  }
}

/** Length of `buf` without a UTF-8 character cut at its end (unless the data really ends there). */
function completeUtf8Length(buf: Buffer, atEnd: boolean): number {
  if (atEnd) return buf.length;
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back] ?? 0;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? buf.length - back : buf.length;
  }
  return buf.length;
}
