import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { JobLog } from './job-log';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'letkite-joblog-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('JobLog', () => {
  test('pages by absolute offsets and ends pages at a line break', () => {
    const log = JobLog.open(dir());
    log.append(Buffer.from('one\ntwo\nthree\n'));
    const p1 = log.read(0, 10, 100);
    expect(p1.data.toString()).toBe('one\ntwo\n');
    const p2 = log.read(p1.nextOffset, 10, 100);
    expect(p2.data.toString()).toBe('three\n');
    expect(p2.nextOffset).toBe(log.end);
    log.close();
  });

  test('stops after max_lines line breaks', () => {
    const log = JobLog.open(dir());
    log.append(Buffer.from('a\nb\nc\nd\n'));
    expect(log.read(0, 100, 2).data.toString()).toBe('a\nb\n');
    log.close();
  });

  test('the file stays bounded, keeps the newest output and reports what was dropped', () => {
    const d = dir();
    const log = JobLog.open(d, 1000);
    let written = '';
    for (let i = 0; i < 500; i++) {
      const line = `line ${i}\n`;
      written += line;
      log.append(Buffer.from(line));
      const files = readdirSync(d);
      expect(files).toHaveLength(1);
      expect(statSync(join(d, files[0] ?? '')).size).toBeLessThanOrEqual(1000);
    }
    expect(log.end).toBe(Buffer.byteLength(written));
    expect(log.start).toBeGreaterThan(0);
    const page = log.read(0, 60_000, 2000);
    expect(page.skippedBytes).toBe(log.start);
    expect(page.offset).toBe(log.start);
    expect(written.endsWith(page.data.toString())).toBe(true);
    expect(page.data.toString().endsWith('line 499\n')).toBe(true);
    log.close();
  });

  test('a chunk larger than the bound keeps only its newest bytes', () => {
    const log = JobLog.open(dir(), 100);
    log.append(Buffer.from('x'.repeat(50)));
    log.append(Buffer.from(`${'y'.repeat(250)}`));
    expect(log.start).toBe(200);
    expect(log.end).toBe(300);
    expect(log.read(0, 1000, 10).data.toString()).toBe('y'.repeat(100));
    log.close();
  });

  test('reopening picks up where the previous process left, and drops an interrupted compaction leftover', () => {
    const d = dir();
    const log = JobLog.open(d, 100);
    for (let i = 0; i < 30; i++) log.append(Buffer.from('abcdefghi\n'));
    const { start, end } = log;
    log.close();
    writeFileSync(join(d, 'output.0.log'), 'stale');
    const again = JobLog.open(d, 100);
    expect(readdirSync(d)).toEqual([`output.${start}.log`]);
    expect([again.start, again.end]).toEqual([start, end]);
    again.close();
  });

  test('never splits a UTF-8 character between pages', () => {
    const log = JobLog.open(dir());
    const text = 'é'.repeat(50);
    log.append(Buffer.from(text));
    let offset = 0;
    let read = '';
    for (let i = 0; i < 200 && offset < log.end; i++) {
      const page = log.read(offset, 7, 10);
      read += page.data.toString('utf8');
      offset = page.nextOffset;
    }
    expect(read).toBe(text);
    expect(log.read(1, 10, 10).offset).toBe(2);
    log.close();
  });

  test('a closed log can be closed again, and output arriving after shutdown is dropped without EBADF', () => {
    const log = JobLog.open(dir());
    log.append(Buffer.from('kept\n'));
    log.close();
    expect(() => log.close()).not.toThrow();
    expect(() => log.append(Buffer.from('late\n'))).not.toThrow();
    expect(log.read(0, 100, 10).data.length).toBe(0);
    expect(log.end).toBe(5);
  });
});
