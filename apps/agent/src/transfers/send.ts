import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, readdir, readlink } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import {
  type AgentFrame,
  DATA_FRAME_HEADER_BYTES,
  LetKiteError,
  type TransferEntry,
  type TransferSideResult,
  writeDataFrameHeader,
} from '@letkite/protocol';
import {
  MAX_TRANSFER_ENTRIES,
  STREAM_RECORD_COST,
  TRANSFER_CHUNK_BYTES,
  TransferSendParams,
} from '@letkite/protocol/ops-transfer';
import { accessOf, type FileAccess } from '../files';
import { parseParams } from '../files/parse-params';
import { directoryPath, openVerified, resolveExisting } from '../files/resolve-path';
import type { RequestStream } from '../request-stream';
import { CreditGate } from './credit-gate';
import { ManifestDigest } from './manifest';
import { SkippedList } from './skipped-list';

/** One request's way out: JSON frames, and the binary frames of its stream. */
export interface StreamSide {
  id: string;
  send: (frame: AgentFrame) => void;
  stream: RequestStream;
  signal: AbortSignal;
}

interface Planned {
  entry: TransferEntry;
  /** Where the entry really is (files are opened from here). */
  real: string;
  /** Every name the entry was reached by, for the open-time check. */
  requested: string;
}

const directoryFlags = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0);
const readFlags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);
}

/**
 * Lists a directory tree depth first (parents before children, names sorted), leaving out exactly what list_dir
 * leaves out (hidden by the file rules; dot names unless asked), reporting what it cannot carry.
 */
async function planTree(
  top: { real: string; spellings: string[]; requested: string; stats: Stats },
  access: FileAccess,
  includeHidden: boolean,
): Promise<{ plan: Planned[]; skipped: SkippedList }> {
  const plan: Planned[] = [
    { entry: { path: '', kind: 'dir', mode: top.stats.mode & 0o777 }, real: top.real, requested: top.requested },
  ];
  const skipped = new SkippedList();
  async function visit(real: string, spellings: string[], rel: string): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await openVerified(real, directoryFlags, top.requested);
    } catch (err) {
      if (rel === '') throw err;
      skipped.add({ path: rel, reason: 'unreadable' });
      return;
    }
    try {
      const base = await directoryPath(handle, real);
      for (const name of (await readdir(base)).sort()) {
        if (!includeHidden && name.startsWith('.')) continue;
        const childReal = join(real, name);
        const childSpellings = spellings.map((s) => join(s, name));
        if (accessOf(access, [...childSpellings, childReal]) === 'none') continue;
        const stats = await lstat(join(base, name)).catch(() => undefined);
        if (!stats) continue;
        const childRel = rel === '' ? name : `${rel}/${name}`;
        if (plan.length >= MAX_TRANSFER_ENTRIES) {
          throw new LetKiteError('too_large', `"${top.requested}" holds more than ${MAX_TRANSFER_ENTRIES} entries`, {
            max_entries: MAX_TRANSFER_ENTRIES,
          });
        }
        const mode = stats.mode & 0o777;
        if (stats.isDirectory()) {
          plan.push({ entry: { path: childRel, kind: 'dir', mode }, real: childReal, requested: top.requested });
          // Depth first: this directory's subtree goes right after it, before its next sibling.
          await visit(childReal, childSpellings, childRel);
        } else if (stats.isFile()) {
          plan.push({
            entry: { path: childRel, kind: 'file', mode, size: stats.size },
            real: childReal,
            requested: top.requested,
          });
        } else if (stats.isSymbolicLink()) {
          const target = await readlink(join(base, name)).catch(() => undefined);
          const pointsAt = target === undefined ? undefined : resolve(dirname(childReal), target);
          // A link is carried only if it stays inside the tree and points at something the caller may see.
          if (pointsAt === undefined || !inside(top.real, pointsAt) || access.access(pointsAt) === 'none') {
            skipped.add({ path: childRel, reason: 'symlink_outside_tree' });
            continue;
          }
          const relativeTarget = relative(dirname(childReal), pointsAt) || '.';
          plan.push({
            entry: { path: childRel, kind: 'symlink', mode: 0o777, target: relativeTarget },
            real: childReal,
            requested: top.requested,
          });
        } else {
          skipped.add({ path: childRel, reason: 'not_a_regular_file' });
        }
      }
    } finally {
      await handle.close();
    }
  }
  await visit(top.real, top.spellings, '');
  return { plan, skipped };
}

/** Streams one open file as data frames, hashing what it reads; waits for credit before each frame. */
async function streamFile(
  handle: FileHandle,
  side: StreamSide,
  gate: CreditGate,
  onBytes: (n: number) => void,
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  const headerBytes = DATA_FRAME_HEADER_BYTES;
  // The socket holds on to a sent frame until it is written out; then its buffer is reused. Recycling keeps a
  // copy of any size from allocating (and the garbage collector freeing) a new half-megabyte buffer per frame.
  const spare: Buffer[] = [];
  let position = 0;
  for (;;) {
    const frame = spare.pop() ?? Buffer.allocUnsafe(headerBytes + TRANSFER_CHUNK_BYTES);
    writeDataFrameHeader(frame, side.id);
    const { bytesRead } = await handle.read(frame, headerBytes, TRANSFER_CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    hash.update(frame.subarray(headerBytes, headerBytes + bytesRead));
    await gate.take(bytesRead);
    const whole = bytesRead === TRANSFER_CHUNK_BYTES;
    const sent = side.stream.sendBinary(whole ? frame : frame.subarray(0, headerBytes + bytesRead), () => {
      if (spare.length < 32) spare.push(frame);
    });
    if (!sent) {
      throw new LetKiteError('machine_offline', 'the gateway connection closed during the transfer');
    }
    position += bytesRead;
    onBytes(bytesRead);
  }
  return { bytes: position, sha256: hash.digest('hex') };
}

/**
 * transfer_send (source side): streams a file, or a directory tree, as entry records and data frames, each
 * frame only once the gateway has passed on credit from the destination. Answers with what was sent: the
 * file's SHA-256 or the tree's manifest digest, and the entries it left out.
 */
export async function transferSend(params: unknown, access: FileAccess, side: StreamSide): Promise<TransferSideResult> {
  const input = parseParams(TransferSendParams, params);
  const gate = new CreditGate();
  side.stream.listen((event) => {
    if (event.type === 'credit') gate.grant(event.bytes);
    else gate.fail(new LetKiteError('protocol_error', `unexpected ${event.type} frame for a transfer source`));
  });
  const onAbort = () => gate.fail(new LetKiteError('timeout', 'the transfer was cancelled'));
  side.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const top = await resolveExisting(input.path, access);
    let plan: Planned[];
    let skipped = new SkippedList();
    if (top.stats.isFile()) {
      plan = [
        {
          entry: { path: '', kind: 'file', mode: top.stats.mode & 0o777, size: top.stats.size },
          real: top.real,
          requested: input.path,
        },
      ];
    } else if (top.stats.isDirectory()) {
      ({ plan, skipped } = await planTree(top, access, input.include_hidden ?? false));
    } else {
      throw new LetKiteError('invalid_params', `not a regular file or directory: "${input.path}"`);
    }
    const files = plan.filter((p) => p.entry.kind === 'file');
    const root = plan[0] as Planned;
    root.entry.total_files = files.length;
    root.entry.total_bytes = files.reduce((sum, p) => sum + (p.entry.size ?? 0), 0);

    const manifest = new ManifestDigest();
    let fileSha = '';
    let bytes = 0;
    let sent = 0;
    for (const item of plan) {
      let handle: FileHandle | undefined;
      if (item.entry.kind === 'file') {
        try {
          handle = await openVerified(item.real, readFlags, item.requested);
          if (!(await handle.stat()).isFile()) throw new LetKiteError('not_found', 'changed');
        } catch (err) {
          await handle?.close();
          if (item.entry.path === '') throw err;
          skipped.add({ path: item.entry.path, reason: 'unreadable' });
          continue;
        }
      }
      try {
        await gate.take(STREAM_RECORD_COST);
        side.send({ type: 'entry', id: side.id, entry: item.entry });
        if (!handle) {
          manifest.add(item.entry);
          continue;
        }
        const result = await streamFile(handle, side, gate, (n) => {
          bytes += n;
        });
        await gate.take(STREAM_RECORD_COST);
        side.send({ type: 'entry_end', id: side.id, bytes: result.bytes, sha256: result.sha256 });
        manifest.add(item.entry, result);
        fileSha = result.sha256;
        sent += 1;
      } finally {
        await handle?.close();
      }
    }
    const kind = root.entry.kind === 'file' ? 'file' : 'dir';
    return {
      kind,
      bytes,
      files: sent,
      sha256: kind === 'file' ? fileSha : manifest.digest(),
      skipped: skipped.entries,
    };
  } finally {
    side.signal.removeEventListener('abort', onAbort);
  }
}
