import { constants } from 'node:fs';
import { LetKiteError, type ReadFileWindowResult } from '@letkite/protocol';
import { ReadFileWindowParams } from '@letkite/protocol/ops-files';
import { hashOpenFile } from './file-hash';
import { parseParams } from './parse-params';
import { type FileAccess, openVerified, resolveExisting } from './resolve-path';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Bytes at the end of `bytes` that start a UTF-8 sequence the window cuts off (0 when it ends on a boundary). */
function cutSequenceBytes(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? back : 0;
  }
  return 0;
}

/**
 * read_file: a window of a visible regular file, with the whole file's size and SHA-256.
 *
 * - `length` above `access.maxReadBytes` answers `too_large`; without `length` the window is maxReadBytes, and
 *   `truncated` says the file goes on past it.
 * - `utf8` (the default) returns text when the window is valid UTF-8; a window ending inside a multi-byte
 *   character is shortened to the last whole one (see `length`). Bytes that are not UTF-8 come back as base64 with
 *   `encoding: 'base64'`, so one call always succeeds and the result says how to read it.
 * - Directories and special files (FIFOs, devices) are refused with `invalid_params`; opening never blocks.
 * - `margin` (asked by the gateway, never by the AI) adds up to that many bytes before and after the window, in
 *   base64, read in the same pass: the gateway masks the window together with them, so a secret the window's edge
 *   cuts through is recognised whole, then drops them.
 */
export async function readFile(params: ReadFileWindowParams, access: FileAccess): Promise<ReadFileWindowResult> {
  const input = parseParams(ReadFileWindowParams, params);
  const target = await resolveExisting(input.path, access);
  if (input.length !== undefined && input.length > access.maxReadBytes) {
    throw new LetKiteError(
      'too_large',
      `length ${input.length} is over this machine's read limit of ${access.maxReadBytes} bytes; read in windows with offset and length`,
      { max_bytes: access.maxReadBytes },
    );
  }
  if (target.stats.isDirectory()) {
    throw new LetKiteError('invalid_params', `is a directory: "${input.path}" (use list_dir)`);
  }
  const offset = input.offset ?? 0;
  const window = input.length ?? access.maxReadBytes;

  const handle = await openVerified(target.real, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0), input.path);
  try {
    if (!(await handle.stat()).isFile()) {
      throw new LetKiteError('invalid_params', `not a regular file: "${input.path}"`);
    }
    const margin = input.margin ?? 0;
    const from = Math.max(0, offset - margin);
    const parts: Buffer[] = [];
    let collected = 0;
    const { sha256, size } = await hashOpenFile(handle, (chunk, position) => {
      const start = Math.max(from - position, 0);
      const end = Math.min(offset + window + margin - position, chunk.length);
      if (end <= start) return;
      parts.push(Buffer.from(chunk.subarray(start, end)));
      collected += end - start;
    });
    const all = Buffer.concat(parts, collected);
    const windowStart = Math.min(offset - from, all.length);
    let bytes = all.subarray(windowStart, Math.min(windowStart + window, all.length));
    let encoding = input.encoding ?? 'utf8';
    let content: string;
    if (encoding === 'utf8') {
      const cut = offset + bytes.length < size ? cutSequenceBytes(bytes) : 0;
      const text = bytes.subarray(0, bytes.length - cut);
      try {
        content = utf8.decode(text);
        bytes = text;
      } catch {
        encoding = 'base64';
        content = bytes.toString('base64');
      }
    } else {
      content = bytes.toString('base64');
    }
    const result = {
      content,
      encoding,
      size,
      sha256,
      offset,
      length: bytes.length,
      truncated: offset + bytes.length < size,
    };
    if (input.margin === undefined) return result;
    return {
      ...result,
      before: all.subarray(0, windowStart).toString('base64'),
      after: all.subarray(windowStart + bytes.length).toString('base64'),
    };
  } finally {
    await handle.close();
  }
}
