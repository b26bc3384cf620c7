/**
 * Helpers for the CLI's own tests (imported only by `*.test.ts`): run a command on in-memory streams and read what
 * it wrote, and give each test a fresh temp directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterEach, beforeEach } from 'vitest';
import type { CliIo } from './io';

/** A writable stream that keeps everything written to it as text. */
export class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** What a command run with {@link runCaptured} answered. */
export interface CapturedRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command with `input` on stdin (empty by default), an empty environment unless given, and captured output. */
export async function runCaptured(
  command: (io: CliIo) => Promise<number>,
  options: { input?: string; env?: CliIo['env'] } = {},
): Promise<CapturedRun> {
  const stdout = new Capture();
  const stderr = new Capture();
  const stdin = Readable.from(options.input === undefined ? [] : [options.input]);
  const code = await command({ stdin, stdout, stderr, env: options.env ?? {} });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/**
 * Registers a fresh temp directory (`<tmp>/<prefix>XXXXXX`) for every test of the calling file, removed after the
 * test; read `.path` inside a test or a hook.
 */
export function tempDirEachTest(prefix: string): { readonly path: string } {
  const dir = { path: '' };
  beforeEach(async () => {
    dir.path = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await rm(dir.path, { recursive: true, force: true });
  });
  return dir;
}
