import { createHash } from 'node:crypto';
import { constants, writevSync } from 'node:fs';
import { chmod, type FileHandle, lchown, link, lstat, mkdir, rename, rm, symlink, unlink } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import { LetKiteError, type TransferEntry, type TransferSideResult } from '@letkite/protocol';
import {
  MAX_TRANSFER_ENTRIES,
  STREAM_RECORD_COST,
  TRANSFER_WINDOW_BYTES,
  TransferReceiveParams,
} from '@letkite/protocol/ops-transfer';
import { accessOf, type FileAccess } from '../files';
import { parseParams } from '../files/parse-params';
import { errnoCode, fsError, openVerified, readOnly, resolveForWrite } from '../files/resolve-path';
import type { InboundStreamEvent } from '../request-stream';
import { EarlyWriteback } from './early-writeback';
import { Inbox } from './inbox';
import { ManifestDigest } from './manifest';
import type { StreamSide } from './send';
import { SkippedList } from './skipped-list';
import { type TempJournal, transferTempName } from './temp-journal';

const newFileFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;

function unexpected(event: InboundStreamEvent, where: string): LetKiteError {
  return new LetKiteError('protocol_error', `unexpected ${event.type} frame ${where}`);
}

function mismatch(what: string, expected: string, actual: string): LetKiteError {
  return new LetKiteError('protocol_error', `checksum mismatch for ${what}: the data arrived altered`, {
    expected_sha256: expected,
    actual_sha256: actual,
  });
}

function conflict(message: string): LetKiteError {
  return new LetKiteError('conflict', message);
}

/**
 * A symlink target that stays inside the tree when resolved from `rel`'s directory: relative, in normal form (only
 * ".." steps, then names; or "." alone, as the source writes them), and inside when resolved lexically. The normal
 * form is what makes the lexical check sound: a ".." after a name could climb out of a directory that is itself a
 * link in the tree ("sub/up" -> ".." makes "sub/up/../x" lexically "sub/x" but really "../x"), while ".." steps
 * taken first only climb the real directories above `rel`, and every link below them stays inside by the same rule.
 */
function targetStaysInside(rel: string, target: string): boolean {
  if (target.startsWith('/') || target.includes('\0')) return false;
  if (target !== '.') {
    const parts = target.split('/');
    const firstName = parts.findIndex((part) => part !== '..');
    const names = firstName === -1 ? [] : parts.slice(firstName);
    if (names.some((part) => part === '' || part === '.' || part === '..')) return false;
  }
  const root = '/letkite-transfer-root';
  const resolved = posix.resolve(root, posix.dirname(rel), target);
  return resolved === root || resolved.startsWith(`${root}/`);
}

/** A file being received: where its data goes, and the background datasync that keeps its final fsync short. */
interface FileSink {
  handle: FileHandle;
  writeback: EarlyWriteback;
}

function fileSink(handle: FileHandle): FileSink {
  return { handle, writeback: new EarlyWriteback(handle) };
}

/**
 * Writes one file's data events to `sink` (or only hashes them, when the entry is skipped) until its
 * entry_end, which must agree with what was written.
 */
async function receiveFile(
  inbox: Inbox,
  sink: FileSink | null,
  what: string,
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let position = 0;
  for (;;) {
    const event = await inbox.next();
    if (event.type === 'data') {
      // Each frame is hashed and written the moment it is taken, synchronously, and only then credited. While the
      // write runs nothing reads the socket, so the rest of the window waits in the kernel's socket buffers, where
      // it costs V8 nothing. Queueing frames in the process while an asynchronous writev ran (as this did before)
      // kept up to a window of socket buffers alive across scavenges and wrote them cold (bench/transfer, 256 MiB
      // copies: 71 against 2 full collections, 2.6 against 1.9 CPU seconds per GiB at the destination). One call
      // writes at most one frame (TRANSFER_CHUNK_BYTES) into the page cache, well under a millisecond; the fsync
      // before the rename stays asynchronous, and the writeback started on the way (early-writeback.ts) has done
      // most of its work by then.
      for (const piece of event.payload) hash.update(piece);
      if (sink) {
        writeAllSync(sink.handle.fd, event.payload, position);
        sink.writeback.wrote(event.bytes);
      }
      position += event.bytes;
      inbox.credit(event.bytes);
      continue;
    }
    if (event.type !== 'entry_end') throw unexpected(event, `inside ${what}`);
    inbox.credit(STREAM_RECORD_COST);
    const sha256 = hash.digest('hex');
    if (event.sha256 !== sha256 || event.bytes !== position) throw mismatch(what, event.sha256, sha256);
    return { bytes: position, sha256 };
  }
}

/** Writes `buffers` at `position`, however many calls it takes. */
function writeAllSync(fd: number, buffers: readonly Buffer[], position: number): void {
  let pending = buffers;
  let at = position;
  while (pending.length > 0) {
    const bytesWritten = writevSync(fd, pending, at);
    at += bytesWritten;
    let skip = bytesWritten;
    const rest: Buffer[] = [];
    for (const buffer of pending) {
      if (skip >= buffer.length) {
        skip -= buffer.length;
        continue;
      }
      rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
      skip = 0;
    }
    pending = rest;
  }
}

async function giveTo(path: string, owner: { uid: number; gid: number } | undefined): Promise<void> {
  if (owner) await lchown(path, owner.uid, owner.gid);
}

/**
 * transfer_receive (destination side): checks the destination, grants credit, and writes the stream it is sent
 * into a temporary file or directory next to the destination (`.<name>.letkite-xfer-<random>.tmp`, recorded in
 * the agent's journal so a killed agent removes it when it starts again). Every file's SHA-256 is checked against
 * the source's as it ends, and the whole stream's digest at the end; only then is the copy renamed into place.
 * Any failure, cancellation or lost connection removes the temporary copy.
 *
 * - The destination must be `rw` under the file rules and its parent must exist. An existing file is replaced only
 *   with `overwrite` (else `conflict`); an existing directory never is (`conflict`).
 * - Inside a directory, each entry's final path is checked again; an entry the rules do not let the caller write
 *   is left out (`not_writable`). Symlinks must stay inside the tree. Permission bits are the source's (rwx only);
 *   new entries are given to the run-as account.
 */
export async function transferReceive(
  params: unknown,
  access: FileAccess,
  side: StreamSide,
  journal: TempJournal,
): Promise<TransferSideResult> {
  const input = parseParams(TransferReceiveParams, params);
  const windowBytes = input.window_bytes ?? TRANSFER_WINDOW_BYTES;
  const inbox = new Inbox(windowBytes, (bytes) => side.send({ type: 'credit', id: side.id, bytes }));
  side.stream.listen((event) => inbox.push(event));
  const onAbort = () => inbox.fail(new LetKiteError('timeout', 'the transfer was cancelled'));
  side.signal.addEventListener('abort', onAbort, { once: true });

  const target = await resolveForWrite(input.path, access);
  if (target.level !== 'rw') throw readOnly(input.path);
  if (target.missing.length > 1) {
    throw new LetKiteError('not_found', `no such directory: "${dirname(target.lexical)}"`);
  }
  if (target.stats?.isDirectory()) {
    throw conflict(`"${input.path}" is an existing directory; a transfer never replaces one (delete it first)`);
  }
  if (target.stats && !target.stats.isFile()) {
    throw new LetKiteError('invalid_params', `not a regular file: "${input.path}"`);
  }
  if (target.stats && !input.overwrite) {
    throw conflict(`"${input.path}" already exists; pass overwrite: true to replace it`);
  }
  const owner = target.stats ? { uid: target.stats.uid, gid: target.stats.gid } : access.runAs;
  const parentReal = dirname(target.real);
  const parent = await openVerified(parentReal, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0), input.path);
  const tempPath = join(parentReal, transferTempName(basename(target.real)));
  const forget = journal.record(tempPath);
  let created = false;
  let open: FileHandle | null = null;
  try {
    inbox.credit(windowBytes);
    const first = await inbox.next();
    if (first.type !== 'entry' || first.entry.path !== '') throw unexpected(first, 'at the start of a transfer');
    inbox.credit(STREAM_RECORD_COST);
    const root = first.entry;
    const skipped = new SkippedList();
    let entries = 1;
    let bytes = 0;
    let files = 0;
    let digest: string;
    let end: InboundStreamEvent;

    if (root.kind === 'file') {
      open = await openVerified(tempPath, newFileFlags, input.path, 0o600);
      created = true;
      if (owner) await open.chown(owner.uid, owner.gid).catch(() => undefined);
      const sink = fileSink(open);
      const result = await receiveFile(inbox, sink, `"${input.path}"`);
      await open.chmod(root.mode & 0o777);
      await sink.writeback.sync();
      await open.close();
      open = null;
      bytes = result.bytes;
      files = 1;
      digest = result.sha256;
      end = await inbox.next();
    } else if (root.kind === 'dir') {
      if (target.stats) throw conflict(`"${input.path}" is a file; a directory cannot replace it`);
      await mkdir(tempPath, { mode: 0o700 });
      created = true;
      await giveTo(tempPath, access.runAs);
      const manifest = new ManifestDigest();
      manifest.add(root);
      const directories = new Set<string>(['']);
      const modes: { path: string; mode: number }[] = [{ path: tempPath, mode: root.mode }];
      for (;;) {
        const event = await inbox.next();
        if (event.type === 'stream_end') {
          end = event;
          break;
        }
        if (event.type !== 'entry' || event.entry.path === '') throw unexpected(event, 'between entries');
        inbox.credit(STREAM_RECORD_COST);
        // The source stops at this many; a stream that goes on is not one of ours.
        entries += 1;
        if (entries > MAX_TRANSFER_ENTRIES) {
          throw new LetKiteError('too_large', `the transfer carries more than ${MAX_TRANSFER_ENTRIES} entries`, {
            max_entries: MAX_TRANSFER_ENTRIES,
          });
        }
        const entry: TransferEntry = event.entry;
        if (!directories.has(posix.dirname(entry.path) === '.' ? '' : posix.dirname(entry.path))) {
          throw new LetKiteError('protocol_error', `entry "${entry.path}" arrived before its directory`);
        }
        const finalSpellings = [join(target.lexical, entry.path), join(target.real, entry.path)];
        const writable = accessOf(access, finalSpellings) === 'rw';
        const at = join(tempPath, entry.path);
        if (entry.kind === 'file') {
          let handle: FileHandle | null = null;
          if (writable) {
            handle = await openVerified(at, newFileFlags, input.path, 0o600);
            open = handle;
            await giveTo(at, access.runAs);
          } else {
            skipped.add({ path: entry.path, reason: 'not_writable' });
          }
          const sink = handle ? fileSink(handle) : null;
          const result = await receiveFile(inbox, sink, `"${entry.path}"`);
          manifest.add(entry, result);
          if (handle && sink) {
            await handle.chmod(entry.mode & 0o777);
            await sink.writeback.sync();
            await handle.close();
            open = null;
            bytes += result.bytes;
            files += 1;
          }
          continue;
        }
        manifest.add(entry);
        if (!writable) {
          skipped.add({ path: entry.path, reason: 'not_writable' });
          continue;
        }
        if (entry.kind === 'dir') {
          await mkdir(at, { mode: 0o700 });
          await giveTo(at, access.runAs);
          directories.add(entry.path);
          modes.push({ path: at, mode: entry.mode });
        } else {
          if (entry.target === undefined || !targetStaysInside(entry.path, entry.target)) {
            skipped.add({ path: entry.path, reason: 'symlink_outside_tree' });
            continue;
          }
          await symlink(entry.target, at);
          await giveTo(at, access.runAs);
        }
      }
      digest = manifest.digest();
      // Deepest first, so a read-only directory is closed only after everything inside it was written.
      for (const { path, mode } of modes.reverse()) await chmod(path, mode & 0o777);
    } else {
      throw new LetKiteError('protocol_error', 'a transfer root must be a file or a directory');
    }

    if (end.type !== 'stream_end') throw unexpected(end, 'after the last entry');
    if (end.sha256 !== digest) throw mismatch(`"${input.path}"`, end.sha256, digest);

    if (input.overwrite && root.kind === 'file') {
      await rename(tempPath, target.real);
    } else if (root.kind === 'file') {
      // link() fails if the name exists: the no-overwrite promise holds even against a file created meanwhile.
      try {
        await link(tempPath, target.real);
      } catch (err) {
        if (errnoCode(err) === 'EEXIST') throw conflict(`"${input.path}" was created meanwhile; not replaced`);
        throw err;
      }
      await unlink(tempPath);
    } else {
      if (await lstat(target.real).catch(() => undefined)) {
        throw conflict(`"${input.path}" was created meanwhile; not replaced`);
      }
      await rename(tempPath, target.real);
    }
    created = false;
    await parent.sync().catch(() => undefined);
    return { kind: root.kind, bytes, files, sha256: digest, skipped: skipped.entries };
  } catch (err) {
    inbox.fail(err);
    await open?.close().catch(() => undefined);
    if (created) await rm(tempPath, { recursive: true, force: true }).catch(() => undefined);
    throw fsError(err, input.path);
  } finally {
    forget();
    side.signal.removeEventListener('abort', onAbort);
    await parent.close();
  }
}
