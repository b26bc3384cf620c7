import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadOrCreateSecretKeyFile, parseSecretKey, TotpSeedCipher } from './totp-seed-cipher';

describe('TOTP seed cipher', () => {
  const seeds = new TotpSeedCipher(randomBytes(32));

  test('a sealed seed opens for its own row only, and never holds the seed in the clear', () => {
    const sealed = seeds.seal('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', 'totp_secrets:usr_1');
    expect(sealed).not.toContain('JBSWY3DP');
    expect(TotpSeedCipher.isSealed(sealed)).toBe(true);
    expect(seeds.open(sealed, 'totp_secrets:usr_1')).toBe('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP');
    expect(() => seeds.open(sealed, 'totp_secrets:usr_2')).toThrow(/does not open/);
    expect(() => new TotpSeedCipher(randomBytes(32)).open(sealed, 'totp_secrets:usr_1')).toThrow(/does not open/);
    const tampered = `${sealed.slice(0, -4)}AAAA`;
    expect(() => seeds.open(tampered, 'totp_secrets:usr_1')).toThrow(/does not open/);
  });

  test('the same seed sealed twice looks different', () => {
    expect(seeds.seal('A', 'x')).not.toBe(seeds.seal('A', 'x'));
  });

  test.each([
    ['hex', randomBytes(32).toString('hex'), true],
    ['base64', randomBytes(32).toString('base64'), true],
    ['base64url', randomBytes(32).toString('base64url'), true],
    ['too short', randomBytes(16).toString('hex'), false],
    ['not a key', 'correct horse battery staple', false],
  ])('LETKITE_SECRET_KEY as %s', (_name, text, ok) => {
    expect(parseSecretKey(text) !== null).toBe(ok);
  });

  test('the key file is made once, 0600, and a damaged one is refused rather than replaced', () => {
    const dir = mkdtempSync(join(tmpdir(), 'letkite-seedkey-'));
    try {
      const file = join(dir, 'secret.key');
      const first = loadOrCreateSecretKeyFile(file);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(loadOrCreateSecretKeyFile(file).equals(first)).toBe(true);
      writeFileSync(file, 'garbage\n');
      expect(() => loadOrCreateSecretKeyFile(file)).toThrow(/does not hold a 32-byte key/);
      expect(readFileSync(file, 'utf8')).toBe('garbage\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
