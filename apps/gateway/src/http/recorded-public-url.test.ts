import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { readRecordedPublicUrl, recordedPublicUrlFile, recordPublicUrl } from './recorded-public-url';

describe('the public URL recorded in the data directory', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'letkite-url-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  test('round-trips, replaces an older URL, and is readable by others (it is not a secret)', () => {
    const d = dataDir();
    expect(readRecordedPublicUrl(d)).toBeUndefined();
    recordPublicUrl(d, 'http://localhost:8787');
    recordPublicUrl(d, 'https://gw.example.com');
    expect(readRecordedPublicUrl(d)).toBe('https://gw.example.com');
    expect(readFileSync(recordedPublicUrlFile(d), 'utf8')).toBe('https://gw.example.com\n');
    expect(statSync(recordedPublicUrlFile(d)).mode & 0o777).toBe(0o644);
  });

  test('a file that is not an http(s) URL counts as none', () => {
    const d = dataDir();
    writeFileSync(recordedPublicUrlFile(d), 'file:///etc/passwd\n');
    expect(readRecordedPublicUrl(d)).toBeUndefined();
    writeFileSync(recordedPublicUrlFile(d), 'not a url');
    expect(readRecordedPublicUrl(d)).toBeUndefined();
  });
});
