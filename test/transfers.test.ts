import { execFile, execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, FULL_SHELL_CEILING, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { removeDir, tempDir, waitFor } from './support/processes';

interface CopyOut {
  bytes: number;
  files: number;
  sha256: string;
  duration_ms: number;
  skipped: { path: string; reason: string }[];
}

interface StatusOut {
  state: 'running' | 'done' | 'failed' | 'cancelled';
  bytes_done: number;
  bytes_total: number | null;
  rate_bytes_per_s: number;
  files_done: number;
  files_total: number | null;
  error?: { code: string; message: string };
  result?: CopyOut;
}

const GiB = 1024 * 1024 * 1024;

const execFileAsync = promisify(execFile);

/**
 * Writes `bytes` random bytes to `path`. Asynchronously on purpose: blocking the test process for seconds would
 * leave the MCP client holding a keep-alive socket the gateway has meanwhile closed.
 */
async function randomFile(path: string, bytes: number): Promise<void> {
  await execFileAsync('sh', ['-c', `head -c ${bytes} /dev/urandom > '${path}'`]);
}

async function sha256Of(path: string): Promise<string> {
  const { stdout } = await execFileAsync('sha256sum', [path]);
  return stdout.split(' ')[0] as string;
}

function sha256File(path: string): string {
  return execFileSync('sha256sum', [path], { encoding: 'utf8' }).split(' ')[0] as string;
}

/** Leftover transfer temporaries (`.name.letkite-xfer-….tmp`) in a directory. */
function leftovers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.includes('.letkite-xfer-'));
}

/** Peak and current resident memory of a process, in bytes. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') * 1024, hwm: kb('VmHWM') * 1024 };
}

describe('copy_between_hosts moves files between real agents through the gateway', () => {
  let gw: TestGateway;
  let alpha: TestAgent;
  let beta: TestAgent;
  let client: Client;
  let src: string;
  let dst: string;

  beforeAll(async () => {
    src = tempDir('xfer-src');
    dst = tempDir('xfer-dst');
    const ceiling = (root: string) =>
      `${FULL_SHELL_CEILING.replace('files = [{ path = "*", access = "rw" }]', `files = [{ path = "${root}", access = "rw" }, { path = "/tmp", access = "ro" }]`).replace('deny = []', `deny = ["${root}/secret"]`)}transfers = true\n`;
    gw = await TestGateway.start();
    alpha = await gw.addAgent('alpha', { ceiling: ceiling(src) });
    beta = await gw.addAgent('beta', { ceiling: ceiling(dst) });
    client = await mcpClient(gw.url, await gw.apiToken());
    await machineOnline(client, 'alpha');
    await machineOnline(client, 'beta');
  });

  afterAll(async () => {
    await client?.close();
    await alpha?.dispose();
    await beta?.dispose();
    await gw?.dispose();
    removeDir(src);
    removeDir(dst);
  });

  test('a small file arrives whole with its sha256 and mode', async () => {
    const from = join(src, 'hello.txt');
    writeFileSync(from, 'hello transfer\n', { mode: 0o640 });
    const r = await callTool<CopyOut>(client, 'copy_between_hosts', {
      source: { machine: 'alpha', path: from },
      destination: { machine: 'beta', path: join(dst, 'hello.txt') },
    });
    expect(r.error).toBeUndefined();
    expect(r.data).toMatchObject({ bytes: 15, files: 1, sha256: sha256File(from), skipped: [] });
    expect(readFileSync(join(dst, 'hello.txt'), 'utf8')).toBe('hello transfer\n');
    expect(statSync(join(dst, 'hello.txt')).mode & 0o777).toBe(0o640);
    expect(leftovers(dst)).toEqual([]);
  });

  test('a 1 GiB file crosses with the checksum verified and the gateway memory flat', async () => {
    const from = join(src, 'big.bin');
    const to = join(dst, 'big.bin');
    // Random bytes, so nothing along the way can shortcut zeros; made once, hashed independently below.
    await randomFile(from, GiB);
    const expected = await sha256Of(from);
    const pid = gw.process?.child.pid as number;
    // Warm up first (a 64 MiB copy brings the gateway's heap and socket buffers to their working size), then reset
    // the kernel's peak-RSS counter, so "growth" means what the big copy added, not how far V8 had shrunk before.
    const warm = join(src, 'warm.bin');
    await randomFile(warm, 64 * 1024 * 1024);
    const warmed = await callTool(client, 'copy_between_hosts', {
      source: { machine: 'alpha', path: warm },
      destination: { machine: 'beta', path: join(dst, 'warm.bin') },
    });
    expect(warmed.error).toBeUndefined();
    removeDir(warm);
    removeDir(join(dst, 'warm.bin'));
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const before = memoryOf(pid);
    let peak = before.rss;
    const sampler = setInterval(() => {
      peak = Math.max(peak, memoryOf(pid).rss);
    }, 50);
    try {
      const r = await callTool<CopyOut>(
        client,
        'copy_between_hosts',
        { source: { machine: 'alpha', path: from }, destination: { machine: 'beta', path: to } },
        { timeout: 300_000 },
      );
      expect(r.error).toBeUndefined();
      expect(r.data).toMatchObject({ bytes: GiB, files: 1, sha256: expected });
    } finally {
      clearInterval(sampler);
    }
    const after = memoryOf(pid);
    // VmHWM is the kernel's own peak, so a spike between samples is caught too.
    const growth = Math.max(peak, after.hwm) - before.rss;
    console.log(`gateway RSS before ${before.rss >> 20} MiB, peak ${Math.max(peak, after.hwm) >> 20} MiB`);
    expect(growth).toBeLessThan(64 * 1024 * 1024);
    expect(await sha256Of(to)).toBe(expected);
    expect(leftovers(dst)).toEqual([]);
    removeDir(from);
    removeDir(to);
  }, 600_000);

  test('an existing destination is refused without overwrite and replaced with it', async () => {
    const from = join(src, 'v2.txt');
    const to = join(dst, 'existing.txt');
    writeFileSync(from, 'new content\n');
    writeFileSync(to, 'old content\n');
    const args = { source: { machine: 'alpha', path: from }, destination: { machine: 'beta', path: to } };
    const refused = await callTool(client, 'copy_between_hosts', args);
    expect(refused.error?.code).toBe('conflict');
    expect(readFileSync(to, 'utf8')).toBe('old content\n');
    const replaced = await callTool<CopyOut>(client, 'copy_between_hosts', { ...args, overwrite: true });
    expect(replaced.error).toBeUndefined();
    expect(readFileSync(to, 'utf8')).toBe('new content\n');
    mkdirSync(join(dst, 'a-dir'));
    const dir = await callTool(client, 'copy_between_hosts', {
      ...args,
      destination: { machine: 'beta', path: join(dst, 'a-dir') },
      overwrite: true,
    });
    expect(dir.error?.code).toBe('conflict');
    expect(leftovers(dst)).toEqual([]);
  });

  test('a directory keeps its layout, modes and inner symlinks; outside links and hidden entries stay behind', async () => {
    const tree = join(src, 'tree');
    mkdirSync(join(tree, 'sub', 'deeper'), { recursive: true });
    writeFileSync(join(tree, 'top.txt'), 'top\n');
    writeFileSync(join(tree, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o750 });
    writeFileSync(join(tree, 'sub', 'deeper', 'leaf.bin'), Buffer.alloc(700_000, 7));
    writeFileSync(join(tree, '.hidden'), 'dot file\n');
    symlinkSync('sub/deeper/leaf.bin', join(tree, 'inner-link'));
    symlinkSync('/etc/passwd', join(tree, 'outside-link'));
    symlinkSync('../../top.txt', join(tree, 'sub', 'deeper', 'up-link'));
    execFileSync('chmod', ['0700', join(tree, 'sub')]);
    const r = await callTool<CopyOut>(client, 'copy_between_hosts', {
      source: { machine: 'alpha', path: tree },
      destination: { machine: 'beta', path: join(dst, 'tree-copy') },
    });
    expect(r.error).toBeUndefined();
    expect(r.data).toMatchObject({ files: 3, bytes: 4 + 18 + 700_000 });
    expect(r.data.skipped).toEqual([{ path: 'outside-link', reason: 'symlink_outside_tree' }]);
    const copy = join(dst, 'tree-copy');
    expect(readFileSync(join(copy, 'top.txt'), 'utf8')).toBe('top\n');
    expect(statSync(join(copy, 'run.sh')).mode & 0o777).toBe(0o750);
    expect(statSync(join(copy, 'sub')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(copy, 'sub', 'deeper', 'leaf.bin')).equals(Buffer.alloc(700_000, 7))).toBe(true);
    expect(readlinkSync(join(copy, 'inner-link'))).toBe('sub/deeper/leaf.bin');
    expect(readlinkSync(join(copy, 'sub', 'deeper', 'up-link'))).toBe('../../top.txt');
    expect(existsSync(join(copy, 'outside-link'))).toBe(false);
    expect(existsSync(join(copy, '.hidden'))).toBe(false);
    expect(leftovers(dst)).toEqual([]);
  });

  test('a source path the rules deny looks exactly like a missing one', async () => {
    mkdirSync(join(src, 'secret'), { recursive: true });
    writeFileSync(join(src, 'secret', 'key.txt'), 'do not copy\n');
    const to = { machine: 'beta', path: join(dst, 'stolen.txt') };
    const denied = await callTool(client, 'copy_between_hosts', {
      source: { machine: 'alpha', path: join(src, 'secret', 'key.txt') },
      destination: to,
    });
    const missing = await callTool(client, 'copy_between_hosts', {
      source: { machine: 'alpha', path: join(src, 'secret', 'nope.txt') },
      destination: to,
    });
    expect(denied.error?.code).toBe('not_found');
    expect(missing.error?.code).toBe('not_found');
    expect(denied.error?.message.replace('key.txt', 'X')).toBe(missing.error?.message.replace('nope.txt', 'X'));
    expect(existsSync(join(dst, 'stolen.txt'))).toBe(false);
  });

  test('a copy within one machine works', async () => {
    const from = join(src, 'same.txt');
    writeFileSync(from, 'same machine\n');
    const r = await callTool<CopyOut>(client, 'copy_between_hosts', {
      source: { machine: 'alpha', path: from },
      destination: { machine: 'alpha', path: join(src, 'same-copy.txt') },
    });
    expect(r.error).toBeUndefined();
    expect(readFileSync(join(src, 'same-copy.txt'), 'utf8')).toBe('same machine\n');
  });

  test('transfer_start runs in the background and transfer_status reports progress and the result', async () => {
    const from = join(src, 'bg.bin');
    await randomFile(from, 64 * 1024 * 1024);
    const started = await callTool<{ transfer_id: string }>(client, 'transfer_start', {
      source: { machine: 'alpha', path: from },
      destination: { machine: 'beta', path: join(dst, 'bg.bin') },
    });
    expect(started.error).toBeUndefined();
    const done = await waitFor(
      'the background transfer to end',
      async () => {
        const s = await callTool<StatusOut>(client, 'transfer_status', { transfer_id: started.data.transfer_id });
        return s.data.state !== 'running' ? s.data : null;
      },
      120_000,
    );
    expect(done).toMatchObject({
      state: 'done',
      bytes_done: 64 * 1024 * 1024,
      bytes_total: 64 * 1024 * 1024,
      files_done: 1,
      files_total: 1,
    });
    expect(done.rate_bytes_per_s).toBeGreaterThan(0);
    expect(done.result?.sha256).toBe(sha256File(from));
    const unknown = await callTool(client, 'transfer_status', { transfer_id: 'tr_unknown' });
    expect(unknown.error?.code).toBe('not_found');
    removeDir(from);
    removeDir(join(dst, 'bg.bin'));
  });

  test('killing the destination agent mid-way fails the transfer and leaves no partial file', async () => {
    const from = join(src, 'interrupted.bin');
    await randomFile(from, 512 * 1024 * 1024);
    const started = await callTool<{ transfer_id: string }>(client, 'transfer_start', {
      source: { machine: 'alpha', path: from },
      destination: { machine: 'beta', path: join(dst, 'interrupted.bin') },
    });
    await waitFor('some bytes to move', async () => {
      const s = await callTool<StatusOut>(client, 'transfer_status', { transfer_id: started.data.transfer_id });
      return s.data.bytes_done > 0;
    });
    await beta.stop('SIGKILL');
    const ended = await waitFor('the transfer to fail', async () => {
      const s = await callTool<StatusOut>(client, 'transfer_status', { transfer_id: started.data.transfer_id });
      return s.data.state !== 'running' ? s.data : null;
    });
    expect(ended.state).toBe('failed');
    expect(ended.error?.code).toBe('machine_offline');
    expect(existsSync(join(dst, 'interrupted.bin'))).toBe(false);
    // A killed agent could not clean up; started again, it removes the temporary copy it left behind.
    await beta.start();
    await machineOnline(client, 'beta');
    await waitFor('the stale temporary copy to be removed', () => leftovers(dst).length === 0);
    expect(lstatSync(dst).isDirectory()).toBe(true);
    removeDir(from);
  });
});

describe('a machine whose ceiling turns transfers off', () => {
  let gw: TestGateway;
  let open: TestAgent;
  let closed: TestAgent;
  let client: Client;
  let dir: string;

  beforeAll(async () => {
    dir = tempDir('xfer-off');
    gw = await TestGateway.start();
    open = await gw.addAgent('open', { ceiling: `${FULL_SHELL_CEILING}transfers = true\n` });
    closed = await gw.addAgent('closed', { ceiling: `${FULL_SHELL_CEILING}transfers = false\n` });
    client = await mcpClient(gw.url, await gw.apiToken());
    await machineOnline(client, 'closed');
  });

  afterAll(async () => {
    await client?.close();
    await open?.dispose();
    await closed?.dispose();
    await gw?.dispose();
    removeDir(dir);
  });

  test('is refused with blocked_by_ceiling as source and as destination, and nothing is written', async () => {
    writeFileSync(join(dir, 'f.txt'), 'x');
    const asSource = await callTool(client, 'copy_between_hosts', {
      source: { machine: 'closed', path: join(dir, 'f.txt') },
      destination: { machine: 'open', path: join(dir, 'g.txt') },
    });
    const asDestination = await callTool(client, 'copy_between_hosts', {
      source: { machine: 'open', path: join(dir, 'f.txt') },
      destination: { machine: 'closed', path: join(dir, 'h.txt') },
    });
    expect(asSource.error?.code).toBe('blocked_by_ceiling');
    expect(asDestination.error?.code).toBe('blocked_by_ceiling');
    expect(readdirSync(dir)).toEqual(['f.txt']);
  });
});
