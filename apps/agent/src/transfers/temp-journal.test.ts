import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { TempJournal, transferTempName } from './temp-journal';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'letkite-journal-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('TempJournal', () => {
  test('a restarted agent removes the temporary copies a killed one left, files and directories alike', () => {
    const state = dir();
    const place = dir();
    const file = join(place, transferTempName('big.bin'));
    const tree = join(place, transferTempName('tree'));
    const journal = new TempJournal(state);
    journal.record(file);
    journal.record(tree);
    writeFileSync(file, 'partial');
    mkdirSync(join(tree, 'sub'), { recursive: true });
    const removed = new TempJournal(state).cleanStale(() => undefined);
    expect(removed.sort()).toEqual([file, tree].sort());
    expect(existsSync(file)).toBe(false);
    expect(existsSync(tree)).toBe(false);
    expect(new TempJournal(state).cleanStale(() => undefined)).toEqual([]);
  });

  test('a forgotten entry (the copy was renamed into place) is not removed', () => {
    const state = dir();
    const place = dir();
    const file = join(place, transferTempName('done.txt'));
    writeFileSync(file, 'whole');
    new TempJournal(state).record(file)();
    expect(new TempJournal(state).cleanStale(() => undefined)).toEqual([]);
    expect(existsSync(file)).toBe(true);
  });

  test('a tampered journal cannot make the agent delete anything but a transfer temporary', () => {
    const state = dir();
    const victim = join(dir(), 'important.txt');
    writeFileSync(victim, 'keep me');
    mkdirSync(join(state, 'transfers-in-progress'), { recursive: true });
    writeFileSync(join(state, 'transfers-in-progress', 'evil.json'), JSON.stringify({ path: victim }));
    expect(new TempJournal(state).cleanStale(() => undefined)).toEqual([]);
    expect(existsSync(victim)).toBe(true);
  });
});
