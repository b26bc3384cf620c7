import { mkdtempSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { EarlyWriteback } from './early-writeback';

const dirs: string[] = [];
function file(): string {
  const d = mkdtempSync(join(tmpdir(), 'letkite-writeback-'));
  dirs.push(d);
  return join(d, 'copy');
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('EarlyWriteback', () => {
  test('syncs a file written across several background datasyncs, its data intact', async () => {
    const path = file();
    const handle = await open(path, 'w');
    const writeback = new EarlyWriteback(handle, 4096);
    const chunk = Buffer.alloc(4096, 7);
    for (let i = 0; i < 8; i++) {
      writeSync(handle.fd, chunk, 0, chunk.length, i * chunk.length);
      writeback.wrote(chunk.length);
      await new Promise((r) => setImmediate(r));
    }
    await writeback.sync();
    await handle.close();
    expect(readFileSync(path)).toEqual(Buffer.alloc(8 * 4096, 7));
  });

  test('a failed background datasync fails the next write and the final sync; none starts below the threshold', async () => {
    const handle = await open(file(), 'w');
    await handle.close(); // every datasync on it now fails (EBADF)
    const writeback = new EarlyWriteback(handle, 1000);
    writeback.wrote(999);
    await new Promise((r) => setTimeout(r, 20));
    writeback.wrote(0); // nothing started yet, so nothing failed
    writeback.wrote(1); // reaches the threshold: a datasync starts, and fails
    await new Promise((r) => setTimeout(r, 20));
    expect(() => writeback.wrote(1)).toThrow(/closed|EBADF/);
    await expect(writeback.sync()).rejects.toThrow(/closed|EBADF/);
  });
});
